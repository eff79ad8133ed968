import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { pythonWithPaho, skipWithout, systemTool, toolPath } from '../../helpers/system-tools.ts';

const saved = { PATH: process.env.PATH, hide: process.env.REFINERY_TEST_HIDE_TOOLS, log: process.env.REFINERY_TEST_SKIP_LOG };
let dir = '';

/** An executable shell script at <dir>/<sub>/<name> that exits with the code given. */
function script(sub: string, name: string, exitCode = 0): string {
  const file = path.join(dir, sub, name);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, `#!/bin/sh\nexit ${exitCode}\n`);
  chmodSync(file, 0o755);
  return file;
}

beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'system-tools-'));
  delete process.env.REFINERY_TEST_HIDE_TOOLS;
  delete process.env.REFINERY_TEST_SKIP_LOG;
});

afterEach(() => {
  process.env.PATH = saved.PATH;
  for (const [key, value] of [
    ['REFINERY_TEST_HIDE_TOOLS', saved.hide],
    ['REFINERY_TEST_SKIP_LOG', saved.log],
  ] as const) {
    if (value === undefined) delete process.env[key];
    else process.env[key] = value;
  }
  rmSync(dir, { recursive: true, force: true });
});

describe('system tools for tests', () => {
  it('systemTool - finds an executable in PATH, passing over a non-executable file and a directory of that name', () => {
    const name = `fake-tool-${process.pid}`;
    writeFileSync(path.join(dir, name), 'not executable');
    mkdirSync(path.join(dir, 'b', name), { recursive: true });
    const found = script('c', name);
    process.env.PATH = [dir, path.join(dir, 'b'), path.join(dir, 'c')].join(path.delimiter);
    expect(systemTool(name)).toEqual({ name, path: found, missing: undefined });
    expect(toolPath(systemTool(name))).toBe(found);
  });

  it('systemTool - a missing tool has a skip reason naming it and the package to install, and toolPath refuses it', () => {
    process.env.PATH = dir;
    const tool = systemTool('ninja');
    expect(tool.path).toBeUndefined();
    expect(tool.missing).toBe('ninja not found in PATH, /usr/sbin or /sbin; install it (Debian package: ninja-build)');
    expect(() => toolPath(tool)).toThrow(/test needs ninja but is not gated by skipWithout/);
  });

  it('systemTool - REFINERY_TEST_HIDE_TOOLS makes a present tool missing', () => {
    const name = `fake-hidden-${process.pid}`;
    script('bin', name);
    process.env.PATH = path.join(dir, 'bin');
    process.env.REFINERY_TEST_HIDE_TOOLS = `tmux, ${name}`;
    expect(systemTool(name)).toMatchObject({
      path: undefined,
      missing: expect.stringContaining(`${name} hidden by REFINERY_TEST_HIDE_TOOLS`),
    });
  });

  it('pythonWithPaho - takes the first python3 in PATH that imports paho, passing over one that cannot', () => {
    script('pyenv', 'python3', 1);
    const system = script('system', 'python3', 0);
    process.env.PATH = [path.join(dir, 'pyenv'), path.join(dir, 'system')].join(path.delimiter);
    expect(pythonWithPaho()).toEqual({ name: 'python3-paho-mqtt', path: system, missing: undefined });
    process.env.PATH = path.join(dir, 'pyenv');
    expect(pythonWithPaho().missing).toMatch(/^python3 with paho-mqtt not found .*python3-paho-mqtt\)$/);
  });

  it('skipWithout - true, one warning and one "missing-tool: <name> <test file>" line in REFINERY_TEST_SKIP_LOG per missing tool; false and silent when all are found', () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    const log = path.join(dir, 'skips.log');
    process.env.REFINERY_TEST_SKIP_LOG = log;
    const present = `fake-present-${process.pid}`;
    script('bin', present);
    process.env.PATH = path.join(dir, 'bin');
    expect(skipWithout(systemTool(present))).toBe(false);
    expect(() => readFileSync(log)).toThrow(/ENOENT/);
    const missing = `fake-missing-${process.pid}`;
    expect(skipWithout(systemTool(present), systemTool(missing))).toBe(true);
    expect(skipWithout(systemTool(missing))).toBe(true);
    expect(readFileSync(log, 'utf8')).toBe(`missing-tool: ${missing} test/unit/helpers/system-tools.test.ts\n`);
    expect(warn.mock.calls).toEqual([
      [
        `skipping tests in test/unit/helpers/system-tools.test.ts: ${missing} not found in PATH, /usr/sbin or /sbin; install it (Debian package: ${missing})`,
      ],
    ]);
    warn.mockRestore();
  });
});
