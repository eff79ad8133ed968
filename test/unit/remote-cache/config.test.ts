import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { resolveRemoteCache, type RemoteCacheRequest } from '../../../src/engine/remote-cache/config.ts';
import { redactSecrets } from '../../../src/security/known-secrets.ts';

let root: string | undefined;
afterEach(() => {
  if (root) rmSync(root, { recursive: true, force: true });
  root = undefined;
});

function project(config?: string): string {
  root = mkdtempSync(path.join(os.tmpdir(), 'refinery-remote-config-'));
  if (config !== undefined) writeFileSync(path.join(root, 'refinery.config.yaml'), config);
  return root;
}

function resolve(request: Partial<RemoteCacheRequest> & { root: string }) {
  return resolveRemoteCache({ env: {}, ...request });
}

describe('remote cache config', () => {
  it('source - none configured: no remote cache', () => {
    expect(resolve({ root: project('backends: {}\n') })).toEqual({ settings: undefined, warnings: [] });
    expect(resolve({ root: project() })).toEqual({ settings: undefined, warnings: [] });
  });

  it('source - the flag wins over REFINERY_REMOTE_CACHE, which wins over the config file', () => {
    const dir = project('remote_cache: { url: "http://127.0.0.1:1/file" }\n');
    const env = { REFINERY_REMOTE_CACHE: 'http://127.0.0.1:2/env/' };
    expect(resolve({ root: dir })).toMatchObject({
      settings: { baseUrl: 'http://127.0.0.1:1/file', source: 'refinery.config.yaml remote_cache.url' },
    });
    expect(resolve({ root: dir, env })).toMatchObject({ settings: { baseUrl: 'http://127.0.0.1:2/env', source: 'REFINERY_REMOTE_CACHE' } });
    expect(resolve({ root: dir, env, flagUrl: 'http://127.0.0.1:3' })).toMatchObject({
      settings: { baseUrl: 'http://127.0.0.1:3', source: '--remote-cache' },
    });
    expect(resolve({ root: dir, env, flagOff: true })).toEqual({ settings: undefined, warnings: [] });
    expect(resolve({ root: dir, env: { REFINERY_REMOTE_CACHE: 'off' } })).toEqual({ settings: undefined, warnings: [] });
    // Empty is unset (a secret a fork's pull request does not get): the file's URL stands.
    expect(resolve({ root: dir, env: { REFINERY_REMOTE_CACHE: '' } })).toMatchObject({ settings: { baseUrl: 'http://127.0.0.1:1/file' } });
  });

  it('read-only - from the file, the flag or REFINERY_REMOTE_CACHE_READ_ONLY', () => {
    const writable = project('remote_cache: { url: "http://127.0.0.1:1" }\n');
    expect(resolve({ root: writable })).toMatchObject({ settings: { readOnly: false } });
    expect(resolve({ root: writable, flagReadOnly: true })).toMatchObject({ settings: { readOnly: true } });
    expect(resolve({ root: writable, env: { REFINERY_REMOTE_CACHE_READ_ONLY: '1' } })).toMatchObject({ settings: { readOnly: true } });
    rmSync(writable, { recursive: true });
    expect(resolve({ root: project('remote_cache: { url: "http://127.0.0.1:1", read_only: true }\n') })).toMatchObject({
      settings: { readOnly: true },
    });
  });

  it('secrets - credentials in the URL become a Basic header, are redacted, and never appear in the base URL', () => {
    const result = resolve({ root: project(), env: { REFINERY_REMOTE_CACHE: 'https://ci:s3cret-passw0rd@cache.example.com/refinery' } });
    expect('settings' in result && result.settings).toMatchObject({
      baseUrl: 'https://cache.example.com/refinery',
      headers: { authorization: `Basic ${Buffer.from('ci:s3cret-passw0rd').toString('base64')}` },
    });
    expect(redactSecrets('password s3cret-passw0rd in a log')).not.toContain('s3cret-passw0rd');
    expect(redactSecrets(`header ${Buffer.from('ci:s3cret-passw0rd').toString('base64')}`)).not.toContain(
      Buffer.from('ci:s3cret-passw0rd').toString('base64'),
    );
  });

  it('secrets - headers come from the environment variables the file names, and their values are redacted', () => {
    const dir = project(
      'remote_cache:\n  url: https://cache.example.com\n  headers_from_env: { Authorization: CACHE_AUTH, X-Team: CACHE_TEAM }\n',
    );
    const result = resolve({ root: dir, env: { CACHE_AUTH: 'Bearer tok-4f9a8b7c6d5e', CACHE_TEAM: 'platform-team-7' } });
    expect('settings' in result && result.settings?.headers).toEqual({
      authorization: 'Bearer tok-4f9a8b7c6d5e',
      'x-team': 'platform-team-7',
    });
    const leaked = redactSecrets('sent Bearer tok-4f9a8b7c6d5e and tok-4f9a8b7c6d5e and platform-team-7');
    expect(leaked).not.toContain('tok-4f9a8b7c6d5e');
    expect(leaked).not.toContain('platform-team-7');
  });

  it('secrets - a header variable that is not set is a warning, not an error (a fork PR has no secrets)', () => {
    const dir = project('remote_cache:\n  url: https://cache.example.com\n  headers_from_env: { Authorization: CACHE_AUTH }\n');
    expect(resolve({ root: dir })).toMatchObject({
      settings: { headers: {} },
      warnings: [expect.stringContaining('CACHE_AUTH (remote_cache.headers_from_env.Authorization) is not set')],
    });
  });

  it.each([
    ['credentials in the file', 'remote_cache: { url: "https://u:p@cache.example.com" }\n', 'credentials never go in the config file'],
    [
      'an unknown key',
      'remote_cache:\n  url: https://c.example.com\n  readonly: true\n',
      "refinery.config.yaml:3:3 remote_cache: unknown key 'readonly'; did you mean 'read_only'?",
    ],
    [
      'a header value in the file',
      'remote_cache:\n  url: https://c.example.com\n  headers_from_env: { Authorization: "Bearer abc" }\n',
      'refinery.config.yaml:3:38 remote_cache.headers_from_env.Authorization: must be an environment variable name',
    ],
    ['another protocol', 'remote_cache: { url: "grpcs://remote.example.com" }\n', 'grpcs: is not supported'],
    ['a dotted prefix', 'remote_cache: { url: "http://127.0.0.1:1/a/../b" }\n', undefined],
    ['a query', 'remote_cache: { url: "http://127.0.0.1:1/?x=1" }\n', 'no query or fragment'],
  ])('errors - %s is refused, located and explained', (_name, text, words) => {
    const result = resolve({ root: project(text) });
    if (words === undefined) {
      // new URL() resolves '..' itself: what is left is a plain prefix.
      expect(result).toMatchObject({ settings: { baseUrl: 'http://127.0.0.1:1/b' } });
      return;
    }
    expect(result).toEqual({ error: expect.stringContaining(words) });
  });

  it('signing - a verify key without a signing key makes the run read-only; a mismatched pair is an error', () => {
    const team = generateKeyPairSync('ed25519');
    const other = generateKeyPairSync('ed25519');
    const dir = project('remote_cache:\n  url: http://127.0.0.1:1\n  verify_key: cache.pub\n  signing_key_env: CACHE_SIGNING_KEY\n');
    writeFileSync(path.join(dir, 'cache.pub'), team.publicKey.export({ format: 'pem', type: 'spki' }));
    const readOnly = resolve({ root: dir });
    expect(readOnly).toMatchObject({ settings: { readOnly: true }, warnings: [expect.stringContaining('this run only reads')] });
    const pem = team.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
    expect(resolve({ root: dir, env: { CACHE_SIGNING_KEY: pem } })).toMatchObject({ settings: { readOnly: false } });
    expect(redactSecrets(`key ${pem}`)).not.toContain(pem.split('\n')[1]);
    const wrong = other.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
    expect(resolve({ root: dir, env: { CACHE_SIGNING_KEY: wrong } })).toEqual({
      error: expect.stringContaining('does not match remote_cache.verify_key'),
    });
  });

  it('signing - a key that is not Ed25519 is refused', () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 });
    const dir = project('remote_cache:\n  url: http://127.0.0.1:1\n  verify_key: cache.pub\n');
    writeFileSync(path.join(dir, 'cache.pub'), rsa.publicKey.export({ format: 'pem', type: 'spki' }));
    expect(resolve({ root: dir })).toEqual({ error: expect.stringContaining('an rsa key; the remote cache signs with Ed25519') });
  });

  it('transport - plain HTTP to another host is a warning; loopback is not', () => {
    expect(resolve({ root: project(), env: { REFINERY_REMOTE_CACHE: 'http://cache.internal:8080' } })).toMatchObject({
      warnings: [expect.stringContaining('plain HTTP')],
    });
    expect(resolve({ root: project(), env: { REFINERY_REMOTE_CACHE: 'http://127.0.0.1:8080' } })).toMatchObject({ warnings: [] });
  });

  it('limits - a transfer deadline floor of 10 s and a minimum rate of 256 KiB/s, both settable', () => {
    const env = { REFINERY_REMOTE_CACHE: 'http://127.0.0.1:8080' };
    expect(resolve({ root: project(), env })).toMatchObject({ settings: { deadlineFloorMs: 10_000, minRateBytesPerSec: 262_144 } });
    expect(resolve({ root: project('remote_cache: { deadline_floor_s: 2.5, min_rate_kib_s: 64 }\n'), env })).toMatchObject({
      settings: { deadlineFloorMs: 2500, minRateBytesPerSec: 65_536 },
    });
  });
});
