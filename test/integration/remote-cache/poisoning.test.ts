// Cache poisoning: an entry whose blob was tampered with, whose artifact breaks its schema, whose
// paths point outside the project or at files the stage does not declare, or whose signature does
// not hold, is refused and reported, and the stage runs here; nothing of it is published.
import { generateKeyPairSync } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoProject, runCli, tempProject, type CliResult, type TempProject } from '../../helpers/project.ts';
import { NGINX, startNginxCache, type NginxCache } from '../../helpers/nginx-cache.ts';
import { skipWithout } from '../../helpers/system-tools.ts';
import { fingerprints, runEnd, stageStarts, warnings } from './clones.ts';
import { forgeStageEntry, sha256 } from './entries.ts';

describe.skipIf(skipWithout(NGINX))('remote cache on nginx: poisoned entries', () => {
  let ngx: NginxCache;
  const projects: TempProject[] = [];
  beforeAll(async () => {
    ngx = await startNginxCache();
  });
  afterAll(async () => {
    for (const p of projects) p.cleanup();
    await ngx?.dispose();
  });

  function track(p: TempProject): TempProject {
    projects.push(p);
    return p;
  }

  function run(p: TempProject, prefix: string, pipeline = 'demo', env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
    return runCli(['run', pipeline, '--json'], { cwd: p.root, env: { REFINERY_REMOTE_CACHE: `${ngx.url}/${prefix}`, ...env } });
  }

  function noStagingLeft(p: TempProject): void {
    const dir = p.path('.refinery/staging');
    expect(existsSync(dir) ? readdirSync(dir) : []).toEqual([]);
  }

  it('tampered blob - a CAS blob whose bytes do not match its digest is refused and reported; the stage runs here', async () => {
    const a = track(demoProject());
    expect((await run(a, 'tamper')).code).toBe(0);
    const good = readFileSync(a.path('out/b.json'));
    const blob = path.join(ngx.root, 'tamper', 'cas', sha256(good));
    expect(existsSync(blob)).toBe(true);
    writeFileSync(blob, '{"lines":["poisoned"]}');
    const b = track(demoProject());
    const result = await run(b, 'tamper');
    expect(result.code, result.stderr).toBe(0);
    expect(warnings(result)).toEqual([
      expect.stringMatching(
        new RegExp(
          `^remote cache: refused the entry for stage b: blob cas/${sha256(good)} holds 22 bytes with sha256 [0-9a-f]{64}, not the ${good.length} bytes it is named by; it runs here$`,
        ),
      ),
    ]);
    expect(stageStarts(result)).toEqual(['b']);
    expect(readFileSync(b.path('out/b.json'))).toEqual(good);
    expect(runEnd(result).remote).toMatchObject({ stages: 1, refused: 1 });
    noStagingLeft(b);
  });

  it('invalid artifact - an entry with sound digests whose artifact breaks its schema is refused like a local one', async () => {
    const a = track(demoProject());
    expect((await run(a, 'schema')).code).toBe(0);
    forgeStageEntry(
      ngx,
      {
        fingerprint: fingerprints(a, 'demo').b as string,
        stage: 'b',
        files: [{ name: 'report', path: 'out/b.json', data: '{"lines": 42}' }],
      },
      'schema',
    );
    const b = track(demoProject());
    const result = await run(b, 'schema');
    expect(result.code, result.stderr).toBe(0);
    expect(warnings(result)).toEqual([
      "remote cache: refused the entry for stage b: output 'report' (out/b.json) at /lines must be array (schema demo-report); it runs here",
    ]);
    expect(stageStarts(result)).toEqual(['b']);
    expect(JSON.parse(readFileSync(b.path('out/b.json'), 'utf8'))).toEqual({ lines: ['alpha', 'hello'] });
    noStagingLeft(b);
  });

  it('paths - entries naming ../x, an absolute path, a path twice or an undeclared file are refused; nothing lands outside', async () => {
    const outside = path.join(os.tmpdir(), `refinery-poison-${process.pid}-abs.txt`);
    const stages = ['up', 'abs', 'twice', 'other'];
    const pipeline = `pipeline: p\nstages:\n${stages.map((s) => `  ${s}: { run: "cat src/a.txt > \${outputs.o}", inputs: [src/a.txt], outputs: { o: out/${s}.txt } }`).join('\n')}\n`;
    const a = track(tempProject({ 'pipelines/p.yaml': pipeline, 'src/a.txt': 'alpha\n' }));
    expect((await run(a, 'paths', 'p')).code).toBe(0);
    const fp = fingerprints(a, 'p');
    const forge = (stage: string, files: Array<{ path: string; data: string }>, acPaths?: string[]): void => {
      forgeStageEntry(
        ngx,
        { fingerprint: fp[stage] as string, stage, files: files.map((f) => ({ name: 'o', ...f })), ...(acPaths ? { acPaths } : {}) },
        'paths',
      );
    };
    forge('up', [{ path: '../escape.txt', data: 'x' }]);
    forge('abs', [{ path: outside, data: 'x' }]);
    forge('twice', [{ path: 'out/twice.txt', data: 'x' }], ['out/twice.txt', 'out/twice.txt']);
    forge('other', [{ path: 'out/elsewhere.txt', data: 'x' }]);
    const b = track(tempProject({ 'pipelines/p.yaml': pipeline, 'src/a.txt': 'alpha\n' }));
    const result = await run(b, 'paths', 'p');
    expect(result.code, result.stderr).toBe(0);
    expect(warnings(result).sort()).toEqual(
      [
        "remote cache: refused the entry for stage up: it names a path with an empty, '.' or '..' segment (../escape.txt); it runs here",
        `remote cache: refused the entry for stage abs: it names an absolute path (${outside}); it runs here`,
        'remote cache: refused the entry for stage twice: it names out/twice.txt twice; it runs here',
        "remote cache: refused the entry for stage other: its files (out/elsewhere.txt) are not the stage's declared outputs; it runs here",
      ].sort(),
    );
    expect(stageStarts(result).sort()).toEqual([...stages].sort());
    for (const s of stages) expect(readFileSync(b.path(`out/${s}.txt`), 'utf8')).toBe('alpha\n');
    expect(existsSync(path.join(b.root, '..', 'escape.txt'))).toBe(false);
    expect(existsSync(outside)).toBe(false);
    expect(existsSync(b.path('out/elsewhere.txt'))).toBe(false);
    expect(runEnd(result).remote).toMatchObject({ stages: 0, refused: 4 });
  });

  it('pruned blob - a blob deleted after its entry was written is a miss: the stage runs, without a warning', async () => {
    const a = track(demoProject());
    expect((await run(a, 'pruned')).code).toBe(0);
    rmSync(path.join(ngx.root, 'pruned', 'cas', sha256(readFileSync(a.path('out/a.txt')))));
    const b = track(demoProject());
    const result = await run(b, 'pruned');
    expect(result.code, result.stderr).toBe(0);
    expect(warnings(result)).toEqual([]);
    expect(stageStarts(result)).toEqual(['a']);
    expect(readFileSync(b.path('out/a.txt'), 'utf8')).toBe('alpha\nhello\n');
    expect(runEnd(result).remote).toMatchObject({ stages: 1, refused: 0 });
  });

  it('signatures - signed entries are used by readers with the team key; another key, or an unsigned entry, is refused', async () => {
    const team = generateKeyPairSync('ed25519');
    const other = generateKeyPairSync('ed25519');
    const config = 'remote_cache:\n  verify_key: keys/cache.pub\n  signing_key_env: CACHE_SIGNING_KEY\n';
    const signer = { CACHE_SIGNING_KEY: team.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString() };
    const clone = (key: typeof team.publicKey): TempProject => {
      const p = track(demoProject());
      p.write('refinery.config.yaml', config);
      p.write('keys/cache.pub', key.export({ format: 'pem', type: 'spki' }).toString());
      return p;
    };
    const a = clone(team.publicKey);
    const first = await run(a, 'signed', 'demo', signer);
    expect(first.code, first.stderr).toBe(0);
    expect(runEnd(first).remote).toMatchObject({ uploaded: 2 });
    expect(readFileSync(path.join(ngx.root, 'signed', 'cas', sha256(JSON.stringify({ lines: ['alpha', 'hello'] }))), 'utf8')).toBe(
      readFileSync(a.path('out/b.json'), 'utf8'),
    );

    const reader = await run(clone(team.publicKey), 'signed');
    expect(reader.code, reader.stderr).toBe(0);
    expect(reader.stderr).toContain('this run only reads');
    expect(warnings(reader)).toEqual([]);
    expect(stageStarts(reader)).toEqual([]);

    const stranger = await run(clone(other.publicKey), 'signed');
    expect(stranger.code, stranger.stderr).toBe(0);
    expect(warnings(stranger)).toEqual([
      'remote cache: refused the entry for stage a: its signature does not match remote_cache.verify_key; it runs here',
      'remote cache: refused the entry for stage b: its signature does not match remote_cache.verify_key; it runs here',
    ]);
    expect(stageStarts(stranger)).toEqual(['a', 'b']);

    // An entry written without the key (a forged or misconfigured writer) is refused too.
    forgeStageEntry(
      ngx,
      {
        fingerprint: fingerprints(a, 'demo').b as string,
        stage: 'b',
        files: [{ name: 'report', path: 'out/b.json', data: '{"lines":["forged"]}' }],
      },
      'signed',
    );
    const c = clone(team.publicKey);
    const unsigned = await run(c, 'signed');
    expect(warnings(unsigned)).toEqual([
      'remote cache: refused the entry for stage b: it is not signed, and remote_cache.verify_key requires signed entries; it runs here',
    ]);
    expect(JSON.parse(readFileSync(c.path('out/b.json'), 'utf8'))).toEqual({ lines: ['alpha', 'hello'] });
  });
});
