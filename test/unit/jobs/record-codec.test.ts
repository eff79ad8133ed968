import { describe, expect, it } from 'vitest';
import { SchemaRegistry } from '../../../src/engine/artifacts/schema-registry.ts';
import { parseRecord, recordProblems, redactRecord, RecordError } from '../../../src/workflows/jobs/record-codec.ts';
import { statusAfter } from '../../../src/workflows/jobs/registry.ts';
import type { JobRecord } from '../../../src/workflows/jobs/types.ts';

const seedRecord: JobRecord = {
  schema_version: 1,
  job_id: 'abc12345',
  status: 'pending',
  created_at: '2026-06-19T09:30:00Z',
  updated_at: '2026-06-19T09:32:00Z',
  prompt: '…',
  agent: 'claude-code',
  agent_session: 'tmux:claude',
  broker: { host: 'broker.hivemq.com', port: 1883, tls: false, username: null, password: null },
  topic_prefix: 'python/mqtt/jobs/abc12345',
  timeout_sec: 3600,
  idle_timeout_sec: 120,
  expected_artifacts: ['sort_problems.md'],
  last_seq: 0,
  auth_token: null,
};

describe('job records', () => {
  it('parseRecord - reads the seed example record and it passes job-record.schema.json', () => {
    expect(parseRecord(JSON.stringify(seedRecord), 'x.json')).toEqual(seedRecord);
    expect(new SchemaRegistry().validate('job-record', seedRecord)).toEqual({ ok: true });
  });

  it('parseRecord - names the file and every bad field', () => {
    expect(() => parseRecord('{', '/r/abc.json')).toThrow(/\/r\/abc\.json: not valid JSON/);
    const bad = { ...seedRecord, status: 'done', last_seq: -1, topic_prefix: 'a/+/b' };
    expect(recordProblems(bad)).toEqual([
      '/status must be pending|running|completed|error|cancelled',
      '/topic_prefix must be a topic without + or #',
      '/last_seq must be an integer >= 0',
    ]);
    expect(() => parseRecord(JSON.stringify(bad), 'f.json')).toThrow(RecordError);
    expect(new SchemaRegistry().validate('job-record', bad).ok).toBe(false);
  });

  it('redactRecord - hides the token and any password, keeps null as null', () => {
    const redacted = redactRecord({ ...seedRecord, auth_token: 'secret', broker: { ...seedRecord.broker, password: 'pw' } });
    expect(redacted.auth_token).toBe('[redacted]');
    expect(redacted.broker.password).toBe('[redacted]');
    expect(redactRecord(seedRecord).auth_token).toBeNull();
  });

  it('statusAfter - pending becomes running on any event, terminal events end it, terminal states stay', () => {
    expect(statusAfter('pending', 'started')).toBe('running');
    expect(statusAfter('running', 'completed')).toBe('completed');
    expect(statusAfter('running', 'error')).toBe('error');
    expect(statusAfter('completed', 'error')).toBe('completed');
    expect(statusAfter('cancelled', 'progress')).toBe('cancelled');
  });
});
