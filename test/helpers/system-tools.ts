// System tools some tests need (mosquitto, tmux, python3 with paho-mqtt, openssl, ...). A test that
// needs one finds it here and is skipped, with a message naming the tool, when it is absent; each such
// skip is also appended to the file named by REFINERY_TEST_SKIP_LOG, so CI (.ci/run), which installs
// every tool, fails instead of passing with tests silently skipped.
import { spawnSync } from 'node:child_process';
import { accessSync, appendFileSync, constants, statSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import { REPO_ROOT } from './project.ts';

export interface SystemTool {
  /** The name skip messages and the skip log use: 'mosquitto', 'tmux', 'python3-paho-mqtt'. */
  name: string;
  /** Absolute path of the executable, when found. */
  path: string | undefined;
  /** Why tests that need it are skipped, when not found. */
  missing: string | undefined;
}

/** Debian packages that provide a tool, for the install hint. */
const PACKAGES: Record<string, string> = {
  mosquitto: 'mosquitto',
  mosquitto_passwd: 'mosquitto',
  ninja: 'ninja-build',
  nginx: 'nginx-light',
  perl: 'perl-base',
  sha256sum: 'coreutils',
  'python3-paho-mqtt': 'python3-paho-mqtt',
};

/** Daemons such as mosquitto install to /usr/sbin, which a non-root PATH often lacks. */
const EXTRA_DIRS = ['/usr/sbin', '/sbin'];

/** Lets a test of this mechanism pretend tools are absent: REFINERY_TEST_HIDE_TOOLS=mosquitto,tmux. */
function hidden(name: string): boolean {
  return (process.env.REFINERY_TEST_HIDE_TOOLS ?? '')
    .split(',')
    .map((t) => t.trim())
    .includes(name);
}

function searchDirs(): string[] {
  return [...new Set([...(process.env.PATH ?? '').split(path.delimiter).filter((d) => path.isAbsolute(d)), ...EXTRA_DIRS])];
}

function isExecutableFile(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

/** Every executable called `name` in PATH, /usr/sbin and /sbin, in that order. */
function candidates(name: string): string[] {
  return searchDirs()
    .map((dir) => path.join(dir, name))
    .filter(isExecutableFile);
}

function missingReason(name: string, what: string): string {
  const why = hidden(name) ? `${what} hidden by REFINERY_TEST_HIDE_TOOLS` : `${what} not found in PATH, /usr/sbin or /sbin`;
  return `${why}; install it (Debian package: ${PACKAGES[name] ?? name})`;
}

const cache = new Map<string, SystemTool>();

function lookup(name: string, find: () => string | undefined, what: string): SystemTool {
  const key = [name, process.env.PATH, process.env.REFINERY_TEST_HIDE_TOOLS].join('\0');
  const cached = cache.get(key);
  if (cached) return cached;
  const found = hidden(name) ? undefined : find();
  const tool = { name, path: found, missing: found ? undefined : missingReason(name, what) };
  cache.set(key, tool);
  return tool;
}

/** An executable found by name in PATH, /usr/sbin or /sbin. */
export function systemTool(name: string): SystemTool {
  return lookup(name, () => candidates(name)[0], name);
}

/** The first python3 (PATH, /usr/sbin, /sbin) that can import paho.mqtt: a pyenv python3 may come first without it. */
export function pythonWithPaho(): SystemTool {
  const imports = (python: string): boolean =>
    spawnSync(python, ['-c', 'import paho.mqtt.client'], { stdio: 'ignore', timeout: 30_000 }).status === 0;
  return lookup('python3-paho-mqtt', () => candidates('python3').find(imports), 'python3 with paho-mqtt');
}

const reported = new Set<string>();

/**
 * For describe.skipIf / it.skipIf: true when any of the tools is missing. Each missing tool is
 * printed (vitest shows it beside the test file) and appended as "missing-tool: <name>" to the file
 * named by REFINERY_TEST_SKIP_LOG, if set.
 */
export function skipWithout(...tools: SystemTool[]): boolean {
  const testFile = path.relative(REPO_ROOT, expect.getState().testPath ?? 'unknown test file');
  for (const tool of tools) {
    if (!tool.missing || reported.has(`${tool.name} ${testFile}`)) continue;
    reported.add(`${tool.name} ${testFile}`);
    console.warn(`skipping tests in ${testFile}: ${tool.missing}`);
    const log = process.env.REFINERY_TEST_SKIP_LOG;
    // One short write per line with O_APPEND: lines from parallel test processes do not interleave.
    if (log) appendFileSync(log, `missing-tool: ${tool.name} ${testFile}\n`);
  }
  return tools.some((tool) => tool.missing !== undefined);
}

/** The path of a tool a test is about to run; a test that runs it must be gated by skipWithout. */
export function toolPath(tool: SystemTool): string {
  if (!tool.path) throw new Error(`test needs ${tool.name} but is not gated by skipWithout: ${tool.missing}`);
  return tool.path;
}
