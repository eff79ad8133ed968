import { describe, expect, it } from 'vitest';
import { SchemaRegistry } from '../../../src/artifacts/schema-registry.ts';
import { buildPayload, decodePayload, formatEventLine } from '../../../src/jobs/event-payload.ts';

const base = { seq: 1, jobId: 'abc12345', event: 'completed' as const, timestamp: '2026-06-19T09:32:00Z', detail: 'done' };

describe('event payloads', () => {
  it('buildPayload - has exactly the seed fields, the token only inside data, and passes job-event.schema.json', () => {
    const payload = buildPayload({ ...base, data: { files: 2 }, token: 'tok' });
    expect(Object.keys(payload)).toEqual(['schema_version', 'seq', 'job_id', 'event', 'timestamp', 'detail', 'data']);
    expect(payload.data).toEqual({ files: 2, auth_token: 'tok' });
    expect(new SchemaRegistry().validate('job-event', payload)).toEqual({ ok: true });
  });

  it('buildPayload - a compat job without data sends no data field', () => {
    expect(buildPayload({ ...base, token: null })).not.toHaveProperty('data');
  });

  it('decodePayload - accepts the seed payload as Python json.dumps writes it (spaces, empty data)', () => {
    const raw = '{"schema_version": 1, "seq": 7, "job_id": "abc12345", "event": "progress", "timestamp": "2026-06-19T09:32:00Z", "detail": "x", "data": {}}';
    const decoded = decodePayload(raw, 'abc12345', null);
    expect(decoded).toMatchObject({ ok: true, payload: { seq: 7, event: 'progress' } });
  });

  it('decodePayload - names the reason for each kind of bad payload', () => {
    const good = JSON.parse(JSON.stringify(buildPayload({ ...base, token: 'tok' }))) as Record<string, unknown>;
    const cases: [unknown, string][] = [
      ['not json', 'undecodable'],
      [[1], 'undecodable'],
      [{ ...good, schema_version: 2 }, 'schema_version'],
      [{ ...good, job_id: 'other' }, 'foreign_job'],
      [{ ...good, seq: 0 }, 'malformed'],
      [{ ...good, seq: 1.5 }, 'malformed'],
      [{ ...good, event: 'done' }, 'malformed'],
      [{ ...good, data: [] }, 'malformed'],
      [{ ...good, data: {} }, 'bad_token'],
      [{ ...good, data: { auth_token: 'tok2' } }, 'bad_token'],
      [{ ...good, data: { auth_token: 'to' } }, 'bad_token'],
    ];
    for (const [value, reason] of cases) {
      const decoded = decodePayload(typeof value === 'string' ? value : JSON.stringify(value), 'abc12345', 'tok');
      expect(decoded.ok ? 'ok' : decoded.reason, JSON.stringify(value)).toBe(reason);
    }
  });

  it('decodePayload - a missing detail or timestamp decodes as empty text', () => {
    const decoded = decodePayload(JSON.stringify({ schema_version: 1, seq: 2, job_id: 'abc12345', event: 'started' }), 'abc12345', null);
    expect(decoded).toMatchObject({ ok: true, payload: { detail: '', timestamp: '' } });
  });

  it('formatEventLine - matches the seed subscriber line format', () => {
    expect(formatEventLine({ timestamp: '2026-06-19T09:32:00Z', job_id: 'abc12345', seq: 3, event: 'completed', detail: 'ok' })).toBe(
      '2026-06-19T09:32:00Z job=abc12345 seq=3 completed            ok',
    );
  });
});
