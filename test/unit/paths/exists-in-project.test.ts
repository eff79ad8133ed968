import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { existsInProject, OutsideProjectError } from '../../../src/engine/paths/inside-project.ts';

let base: string | undefined;
afterEach(() => {
  if (base) rmSync(base, { recursive: true, force: true });
  base = undefined;
});

/** <base>/project (with data/here.txt, a link out, a dangling link) and <base>/logs/done.txt beside it. */
function layout(): { root: string; logs: string } {
  base = mkdtempSync(path.join(os.tmpdir(), 'refinery-exists-'));
  const root = path.join(base, 'project');
  const logs = path.join(base, 'logs');
  mkdirSync(path.join(root, 'data'), { recursive: true });
  mkdirSync(logs);
  writeFileSync(path.join(root, 'data', 'here.txt'), 'x');
  writeFileSync(path.join(logs, 'done.txt'), 'x');
  symlinkSync(logs, path.join(root, 'out-link'));
  symlinkSync(path.join(root, 'nowhere'), path.join(root, 'dangling'));
  return { root, logs };
}

describe('existsInProject', () => {
  it('existsInProject - inside the project it answers, a dangling link or a missing file being false', () => {
    const { root } = layout();
    expect(existsInProject(root, 'data/here.txt')).toBe(true);
    expect(existsInProject(root, 'data/../data/here.txt')).toBe(true);
    expect(existsInProject(root, 'data/none.txt')).toBe(false);
    expect(existsInProject(root, 'data/here.txt/below')).toBe(false);
    expect(existsInProject(root, 'dangling')).toBe(false);
    expect(existsInProject(root, '')).toBe(true);
  });

  it('existsInProject - absolute, .. out, or a symlink leading out is refused, found or not', () => {
    const { root, logs } = layout();
    for (const rel of [path.join(logs, 'done.txt'), '../logs/done.txt', 'out-link/done.txt', 'out-link/none.txt', '/etc/passwd'])
      expect(() => existsInProject(root, rel), rel).toThrow(OutsideProjectError);
  });

  it('existsInProject - inside a folder a param names it answers, beside it it refuses, and a missing folder is false', () => {
    const { root, logs } = layout();
    expect(existsInProject(root, path.join(logs, 'done.txt'), [logs])).toBe(true);
    expect(existsInProject(root, '../logs/done.txt', ['../logs'])).toBe(true);
    expect(existsInProject(root, path.join(logs, 'none.txt'), [logs])).toBe(false);
    expect(() => existsInProject(root, path.join(logs, '..', 'project', '..', 'x'), [logs])).toThrow(OutsideProjectError);
    expect(existsInProject(root, path.join(base as string, 'gone', 'done.txt'), [path.join(base as string, 'gone')])).toBe(false);
  });
});
