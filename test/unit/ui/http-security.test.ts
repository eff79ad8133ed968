import { describe, expect, it } from 'vitest';
import { allowedHosts, cookieValue, hostAllowed, sameOriginRequest, tokenMatches } from '../../../src/ui/http-security.ts';
import { safeSegments } from '../../../src/ui/safe-path.ts';
import { stageState } from '../../../src/ui/data/pipelines.ts';

describe('dashboard request checks', () => {
  it('http-security - the token must match exactly, whatever its length', () => {
    expect(tokenMatches('abc', 'abc')).toBe(true);
    expect(tokenMatches('abd', 'abc')).toBe(false);
    expect(tokenMatches('abcd', 'abc')).toBe(false);
    expect(tokenMatches('', 'abc')).toBe(false);
    expect(tokenMatches(undefined, 'abc')).toBe(false);
  });

  it('http-security - cookies are read by exact name', () => {
    expect(cookieValue({ cookie: 'a=1; refinery-ui-80=tok; b=2' }, 'refinery-ui-80')).toBe('tok');
    expect(cookieValue({ cookie: 'xrefinery-ui-80=tok' }, 'refinery-ui-80')).toBeUndefined();
  });

  it('http-security - Host must be loopback (or the explicit --host) with the server port', () => {
    const allowed = allowedHosts(8080);
    expect(hostAllowed({ host: '127.0.0.1:8080' }, allowed)).toBe(true);
    expect(hostAllowed({ host: 'LOCALHOST:8080' }, allowed)).toBe(true);
    expect(hostAllowed({ host: '[::1]:8080' }, allowed)).toBe(true);
    expect(hostAllowed({ host: 'evil.test:8080' }, allowed)).toBe(false);
    expect(hostAllowed({ host: '127.0.0.1:8081' }, allowed)).toBe(false);
    expect(hostAllowed({}, allowed)).toBe(false);
    expect(hostAllowed({ host: 'box.lan:8080' }, allowedHosts(8080, 'box.lan'))).toBe(true);
  });

  it('http-security - mutations need a same-origin Origin; the stream refuses cross-site', () => {
    const allowed = allowedHosts(8080);
    const host = '127.0.0.1:8080';
    expect(sameOriginRequest({ host, origin: 'http://127.0.0.1:8080' }, allowed, true)).toBe(true);
    expect(sameOriginRequest({ host }, allowed, true)).toBe(false);
    expect(sameOriginRequest({ host }, allowed, false)).toBe(true);
    expect(sameOriginRequest({ host, origin: 'http://evil.test' }, allowed, false)).toBe(false);
    expect(sameOriginRequest({ host, origin: 'http://localhost:8080' }, allowed, true)).toBe(false);
    expect(sameOriginRequest({ host, origin: 'null' }, allowed, true)).toBe(false);
    expect(sameOriginRequest({ host, origin: 'http://127.0.0.1:8080', 'sec-fetch-site': 'cross-site' }, allowed, true)).toBe(false);
    expect(sameOriginRequest({ host, 'sec-fetch-site': 'same-site' }, allowed, false)).toBe(false);
  });

  it('safe-path - dot segments, encoded separators and secret folders are refused', () => {
    expect(safeSegments('out/a.txt', true)).toEqual(['out', 'a.txt']);
    expect(safeSegments('.refinery/runs/x/events.jsonl', true)).toEqual(['.refinery', 'runs', 'x', 'events.jsonl']);
    for (const bad of [
      '../x',
      'a/../b',
      '%2e%2e/x',
      'a%2fb',
      'a%5cb',
      'a%00b',
      '/etc/passwd',
      'a//b',
      '.mam/jobs/j.json',
      '.git/config',
      '.env',
      '.refinery/ui/1.json',
      'node_modules/x',
      '%E0%A4%A',
    ]) {
      expect(safeSegments(bad, true), bad).toBeUndefined();
    }
  });

  it('stage-state - a live run, then the newest outcome, then refinery plan, then the journal', () => {
    const record = { runId: 'r', finishedAt: 't', durationMs: 1 };
    const verdict = (decision: 'run' | 'fresh' | 'skip') => ({ id: 's', decision, reasons: [], needs: [] });
    expect(stageState('running', true, record, verdict('fresh'))).toBe('running');
    expect(stageState('running', false, record, undefined)).toBe('up-to-date');
    expect(stageState('failed', false, record, verdict('fresh'))).toBe('failed');
    expect(stageState('succeeded', false, record, verdict('run'))).toBe('stale');
    expect(stageState(undefined, false, undefined, verdict('run'))).toBe('never-run');
    expect(stageState(undefined, false, record, undefined)).toBe('up-to-date');
    expect(stageState(undefined, false, undefined, undefined)).toBe('never-run');
    expect(stageState('aborted', false, record, undefined)).toBe('stale');
  });
});
