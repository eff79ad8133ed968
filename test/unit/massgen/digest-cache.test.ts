// The summary's digest cache: an unchanged analysis.json is known by its stat once it is older
// than a second when read (a change in the same clock tick could hide), else by its content hash;
// a changed one is parsed again.
import { mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DigestCache } from '../../../src/workflows/massgen/digest-cache.ts';
import { analyzeTurnUnit } from '../../../src/workflows/massgen/analyze.ts';
import { resolveTurnUnit } from '../../../src/workflows/massgen/discover.ts';
import { isOutsideProject, reportDirIn, reportLocation } from '../../../src/workflows/massgen/report-location.ts';
import { REPO_ROOT } from '../../helpers/project.ts';

const dir = mkdtempSync(path.join(os.tmpdir(), 'digest-cache-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function analysisText(): Promise<string> {
  const resolved = await resolveTurnUnit(path.join(REPO_ROOT, 'examples/massgen_logs/log_20251201_091040_312100/turn_1'));
  if (!resolved.ok) throw new Error(resolved.reason);
  return `${JSON.stringify((await analyzeTurnUnit(resolved.unit)).analysis, null, 2)}\n`;
}

describe('DigestCache', () => {
  it('DigestCache - new file parsed; same content re-read by hash while racy; by stat once older than a second; changed content parsed again', async () => {
    const file = path.join(dir, 'analysis.json');
    const cacheFile = path.join(dir, 'cache', 'digests.json');
    writeFileSync(file, await analysisText());
    const first = new DigestCache(cacheFile);
    const read = first.read(file);
    expect(read.ok && read.digest.session).toBe('log_20251201_091040_312100');
    expect(first.stats).toEqual({ cached: 0, hashed: 0, parsed: 1 });
    first.save();
    // Written just now: the stat alone is not trusted.
    const second = new DigestCache(cacheFile);
    expect(second.read(file).ok).toBe(true);
    expect(second.stats).toEqual({ cached: 0, hashed: 1, parsed: 0 });
    // Older than the moment it was last read by more than a second: known by stat.
    const old = Date.now() / 1000 - 60;
    utimesSync(file, old, old);
    second.forget(file);
    expect(second.read(file).ok).toBe(true);
    second.save();
    const third = new DigestCache(cacheFile);
    expect(third.read(file).ok).toBe(true);
    expect(third.stats).toEqual({ cached: 1, hashed: 0, parsed: 0 });
    // Changed content (rewritten now: a new mtime) is parsed again.
    writeFileSync(file, readFileSync(file, 'utf8').replace('"value": "completed"', '"value": "incomplete"'));
    const fourth = new DigestCache(cacheFile);
    const changed = fourth.read(file);
    expect(fourth.stats.parsed).toBe(1);
    expect(changed.ok && changed.digest.state).toBe('incomplete');
  });

  it('DigestCache - a file that is not an analysis, or not JSON, is a problem, not a crash', () => {
    const cache = new DigestCache(null);
    writeFileSync(path.join(dir, 'not-json.json'), '{');
    writeFileSync(path.join(dir, 'other.json'), '{"kind":"something-else"}');
    expect(cache.read(path.join(dir, 'not-json.json'))).toMatchObject({ ok: false, problem: expect.stringContaining('not valid JSON') });
    expect(cache.read(path.join(dir, 'other.json'))).toMatchObject({
      ok: false,
      problem: expect.stringContaining('not a MassGen turn analysis'),
    });
    expect(cache.read(path.join(dir, 'missing.json'))).toMatchObject({ ok: false, problem: 'cannot read: ENOENT' });
  });
});

describe('report location', () => {
  it('report location - beside the turns for logs given inside the project; .refinery/massgen for absolute or ../ paths; --reports wins', () => {
    expect(['.massgen/massgen_logs', 'runs/', './x/../logs'].map(isOutsideProject)).toEqual([false, false, false]);
    expect(['/abs/logs', '../other/logs', '..', 'a/../../b'].map(isOutsideProject)).toEqual([true, true, true, true]);
    const unit = { logDir: '/p/.massgen/massgen_logs/log_1', turnDir: '/p/.massgen/massgen_logs/log_1/turn_2' };
    expect(reportDirIn(reportLocation('/p', '.massgen/massgen_logs'), unit)).toBe(unit.turnDir);
    const outside = { logDir: '/dl/logs/log_1', turnDir: '/dl/logs/log_1/turn_2' };
    expect(reportDirIn(reportLocation('/p', '/dl/logs'), outside)).toBe('/p/.refinery/massgen/log_1/turn_2');
    expect(reportDirIn(reportLocation('/p', '/dl/logs'), { logDir: '/dl/logs/log_0', turnDir: null })).toBe('/p/.refinery/massgen/log_0');
    expect(reportDirIn(reportLocation('/p', '/dl/logs', 'reports'), outside)).toBe('/p/reports/log_1/turn_2');
  });
});
