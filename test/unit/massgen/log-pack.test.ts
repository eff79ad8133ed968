import { existsSync, mkdirSync, readFileSync, readlinkSync, symlinkSync, writeFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { packLogDir, unpackLogDir, type LogPack } from '../../../src/workflows/massgen/experiments/log-pack.ts';
import { tempProject, type TempProject } from '../../helpers/project.ts';

const projects: TempProject[] = [];
afterEach(() => {
  for (const p of projects.splice(0)) p.cleanup();
});
const LOG = '.massgen/massgen_logs/log_20260101_000000_000001';

function withLog(): TempProject {
  const p = tempProject({
    [`${LOG}/turn_1/attempt_1/agent_outputs/agent_a.txt`]: 'key sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD used\n',
    [`${LOG}/turn_1/attempt_1/status.json`]: '{"is_complete": true}\n',
  });
  projects.push(p);
  symlinkSync('agent_a.txt', p.path(`${LOG}/turn_1/attempt_1/agent_outputs/final_presentation_agent_a_latest.txt`));
  symlinkSync('/etc/passwd', p.path(`${LOG}/turn_1/attempt_1/agent_outputs/outside.txt`));
  return p;
}

describe('MassGen log pack', () => {
  it('log-pack - under the cap: files redacted, in-dir links kept, restored where missing', () => {
    const a = withLog();
    const pack = packLogDir(a.root, LOG, 1_000_000);
    expect(pack.packed).toBe(true);
    expect(pack.files.map((f) => f.path)).not.toContain('turn_1/attempt_1/agent_outputs/outside.txt');
    const b = tempProject({});
    projects.push(b);
    expect(unpackLogDir(b.root, pack)).toEqual({ restored: true, files: 3 });
    const text = readFileSync(b.path(`${LOG}/turn_1/attempt_1/agent_outputs/agent_a.txt`), 'utf8');
    expect(text).toMatch(/^key .* used\n$/);
    expect(text).not.toContain('sk-proj-abcdefghijklmnop');
    expect(readlinkSync(b.path(`${LOG}/turn_1/attempt_1/agent_outputs/final_presentation_agent_a_latest.txt`))).toBe('agent_a.txt');
    // A log dir that is there is left alone.
    expect(unpackLogDir(b.root, pack)).toMatchObject({ restored: false, reason: 'the log dir is already here' });
  });

  it('log-pack - over the cap: no file packed, and why', () => {
    const a = withLog();
    expect(packLogDir(a.root, LOG, 10)).toMatchObject({ packed: false, files: [], reason: expect.stringContaining('over the cap of 10') });
  });

  it('log-pack - a pack whose paths leave the log dir restores nothing', () => {
    const b = tempProject({});
    projects.push(b);
    const bad = (files: LogPack['files'], logDir = LOG): LogPack => ({
      schema_version: 1,
      log_dir: logDir,
      bytes: 1,
      cap_bytes: 9,
      packed: true,
      files,
    });
    expect(() => unpackLogDir(b.root, bad([{ path: '../../../escape.txt', data: 'eA==' }]))).toThrow(/would leave the log dir/);
    expect(() => unpackLogDir(b.root, bad([{ path: 'x.txt', link: '../../../../../etc/passwd' }]))).toThrow(/would leave the log dir/);
    expect(() => unpackLogDir(b.root, bad([], '../outside'))).toThrow(/not a path inside the project/);
    mkdirSync(b.path('.massgen'), { recursive: true });
    writeFileSync(b.path('.massgen/x'), '');
    expect(existsSync(b.path(LOG))).toBe(false);
  });
});
