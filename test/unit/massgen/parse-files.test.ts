import { describe, expect, it } from 'vitest';
import type { LogWarning } from '../../../src/workflows/massgen/model.ts';
import { parseCoordinationEvents } from '../../../src/workflows/massgen/parse-coordination-events.ts';
import { parseCoordinationTable } from '../../../src/workflows/massgen/parse-coordination-table.ts';
import { parseMetadata } from '../../../src/workflows/massgen/parse-metadata.ts';
import { parseStatus } from '../../../src/workflows/massgen/parse-status.ts';
import { parseVote } from '../../../src/workflows/massgen/parse-vote.ts';
import { parseJsonText } from '../../../src/workflows/massgen/json-file.ts';
import { shapeProblems, SHAPES } from '../../../src/workflows/massgen/shape-check.ts';

function sink(): { warnings: LogWarning[]; warn: (f: string, c: string, m: string) => void } {
  const warnings: LogWarning[] = [];
  return { warnings, warn: (file, code, message) => warnings.push({ file, code, message }) };
}

describe('massgen file parsers', () => {
  it('parseStatus - null reliability means zero retries; agents keyed by id', () => {
    const { warnings, warn } = sink();
    const status = parseStatus(
      {
        finish_reason: 'completed',
        is_complete: true,
        meta: { last_updated: 5, start_time: 1 },
        agents: { b: { status: 'voted', reliability: null }, a: { status: 'waiting' } },
        results: { votes: { 'agent1.1': 2 }, winner: 'a' },
      },
      'status.json',
      warn,
    );
    expect(status?.agents.map((a) => [a.id, a.enforcement.length])).toEqual([
      ['a', 0],
      ['b', 0],
    ]);
    expect(status?.votes).toEqual({ 'agent1.1': 2 });
    expect(warnings).toEqual([]);
  });

  it('parseStatus - wrong types are ignored with one warning naming the fields', () => {
    const { warnings, warn } = sink();
    const status = parseStatus(
      {
        finish_reason: 7,
        meta: { last_updated: 'soon' },
        agents: { a: { answer_count: [] } },
        results: { winner: 3, votes: { x: 'two' } },
      },
      'status.json',
      warn,
    );
    expect(status).toMatchObject({ finishReason: null, lastUpdated: null, winner: null, votes: {} });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.message).toContain('finish_reason');
    expect(parseStatus([1, 2], 'status.json', warn)).toBeNull();
    expect(warnings).toHaveLength(2);
  });

  it('parseJsonText - a file cut off mid-write says so', () => {
    const { warnings, warn } = sink();
    expect(parseJsonText('{"a": {"b": 1', 'x.json', warn)).toBeUndefined();
    expect(parseJsonText('   ', 'y.json', warn)).toBeUndefined();
    expect(warnings.map((w) => w.code)).toEqual(['invalid-json', 'empty']);
  });

  it('parseVote - missing voted_for_label (pre v0.1.27) is null; missing voted_for rejects the vote', () => {
    const { warnings, warn } = sink();
    expect(parseVote({ voter_id: 'agent_4', voted_for: 'agent_2', reason: 'Agent 1 is best' }, 'v.json', warn, 'agent_4')).toMatchObject({
      votedFor: 'agent_2',
      votedForLabel: null,
    });
    expect(parseVote({ voter_id: 'agent_4', voted_for: 3 }, 'v.json', warn, 'agent_4')).toBeNull();
    expect(warnings).toHaveLength(1);
  });

  it('parseCoordinationEvents - keeps duplicated session events as written and skips malformed ones', () => {
    const { warnings, warn } = sink();
    const parsed = parseCoordinationEvents(
      {
        session_metadata: { agent_ids: ['a', 'b'] },
        events: [{ event_type: 'session_start', timestamp: 1 }, { event_type: 'session_start', timestamp: 2 }, 'junk', { timestamp: 3 }],
      },
      'c.json',
      warn,
    );
    expect(parsed?.events.map((e) => e.type)).toEqual(['session_start', 'session_start']);
    expect(warnings[0]?.message).toContain('2 event(s)');
  });

  it('parseCoordinationTable - reads only the TOTALS row', () => {
    const text = '| SUMMARY | Agent 1 |\n| TOTALS   |        7 answers, 8 votes, 17 restarts        |\n+---+';
    expect(parseCoordinationTable(text)).toEqual({ answers: 7, votes: 8, restarts: 17 });
    expect(parseCoordinationTable('no table here')).toBeNull();
  });

  it('parseMetadata - reads agents and version, never copies secret-looking keys', () => {
    const { warnings, warn } = sink();
    const yaml =
      'query: q\ntimestamp: "2026-11-30T06:48:13.689721"\nconfig:\n  agents:\n  - id: agent_a\n    backend:\n      type: chatcompletion\n      model: m\n  orchestrator:\n    max_new_answers_per_agent: 3\n    api_key: sk-secret\nmassgen_version: 0.1.91\n';
    const meta = parseMetadata(yaml, 'm.yaml', warn);
    expect(meta?.agents).toEqual([{ id: 'agent_a', backend: 'chatcompletion', model: 'm' }]);
    expect(meta?.massgenVersion).toBe('0.1.91');
    expect(JSON.stringify(meta)).not.toContain('sk-secret');
    expect(warnings).toEqual([]);
    expect(parseMetadata('query: q\nconfig: [unclosed', 'm.yaml', warn)).toBeNull();
    parseMetadata('query: cut off mid-wr', 'm.yaml', warn);
    expect(warnings.map((w) => w.code)).toEqual(['invalid-yaml', 'truncated', 'missing-field']);
  });

  it('shapeProblems - reports wrong types as JSON pointers, accepts nulls where MassGen writes them', () => {
    const shape = SHAPES['status.json'];
    if (!shape) throw new Error('no shape');
    expect(shapeProblems({ agents: { a: { reliability: null, token_usage: null } }, results: { winner: null, votes: {} } }, shape)).toEqual(
      [],
    );
    expect(shapeProblems({ agents: { a: { round_history: [{ duration_ms: 'x' }] } }, results: { votes: { l: [] } } }, shape)).toEqual([
      '/agents/a/round_history/0/duration_ms (string, expected number)',
      '/results/votes/l (array, expected number)',
    ]);
  });
});
