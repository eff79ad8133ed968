import { describe, expect, it } from 'vitest';
import { finalInputFiles } from '../../../src/engine/session/final-inputs.ts';
import type { StageInstance } from '../../../src/engine/types/plan.ts';

/** Only what finalInputFiles reads of an instance: its id, inputs and outputs. */
function inst(id: string, inputs: string[], outputs: string[]): StageInstance {
  return { id, inputs, outputs: Object.fromEntries(outputs.map((p, i) => [`o${i}`, { path: p }])) } as unknown as StageInstance;
}

describe('final inputs', () => {
  const plan = [
    inst('turn[a]', ['logs/a/**'], ['logs/a/analysis.json']),
    inst('turn[b]', ['logs/b/**'], ['logs/b/analysis.json']),
    inst('summary', ['logs/*/analysis.json', 'logs/a/shared.txt'], ['summary.json']),
    inst('docs', ['notes'], ['out/notes.txt']),
  ];

  it('final inputs - the files of a final stage are left out, except outputs and files another stage reads', () => {
    const leaveOut = finalInputFiles(plan, new Set(['turn[a]', 'docs']));
    expect(leaveOut).toBeDefined();
    const out = leaveOut as (rel: string) => boolean;
    expect(out('logs/a/attempt_1/events.jsonl')).toBe(true);
    expect(out('notes/sub/n.md')).toBe(true);
    // Its own output, a file the summary also reads, and a stage that is not final.
    expect(out('logs/a/analysis.json')).toBe(false);
    expect(out('logs/a/shared.txt')).toBe(false);
    expect(out('logs/b/attempt_1/events.jsonl')).toBe(false);
    // Outside every final stage's inputs, and a sibling folder whose name only starts the same.
    expect(out('pipelines/p.yaml')).toBe(false);
    expect(out('notes2/x.md')).toBe(false);
  });

  it('final inputs - none when no stage is final', () => {
    expect(finalInputFiles(plan, new Set())).toBeUndefined();
  });
});
