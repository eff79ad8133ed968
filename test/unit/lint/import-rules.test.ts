// The import rules of .dependency-cruiser.cjs (run by `npm run lint`), checked on small trees
// made here: each kind of violation fails the check, and a tree that keeps the rules passes.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PACKAGE_ROOT } from '../../../src/engine/paths/package-root.ts';

const CONFIG = path.join(PACKAGE_ROOT, '.dependency-cruiser.cjs');
const DEPCRUISE = path.join(PACKAGE_ROOT, 'node_modules', '.bin', 'depcruise');
const dirs: string[] = [];

afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A project with these files (path → the modules it imports), checked as `npm run lint` checks src/. */
async function cruise(files: Record<string, string[]>): Promise<{ code: number; output: string }> {
  const root = mkdtempSync(path.join(os.tmpdir(), 'refinery-import-rules-'));
  dirs.push(root);
  for (const [file, imports] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    const lines = imports.map((to, i) => `import type { T as T${i} } from '${to}';`);
    writeFileSync(path.join(root, file), `${lines.join('\n')}\nexport type T = string;\n`);
  }
  return new Promise((resolve) => {
    execFile(DEPCRUISE, ['src', '--config', CONFIG, '--output-type', 'err'], { cwd: root }, (error, stdout, stderr) => {
      resolve({ code: error ? Number(error.code ?? 1) : 0, output: `${stdout}${stderr}` });
    });
  });
}

describe('import rules', () => {
  it('import rules - imports that point down the layers, without circles, pass', async () => {
    const result = await cruise({
      'src/security/redact.ts': [],
      'src/task/define-task.ts': [],
      'src/engine/run.ts': ['../security/redact.ts', '../task/define-task.ts'],
      'src/workflows/refine.ts': ['../engine/run.ts'],
      'src/ui/data.ts': ['../workflows/refine.ts'],
      'src/cli/main.ts': ['../ui/data.ts', '../engine/run.ts'],
    });
    expect(result.output).toContain('no dependency violations found');
    expect(result.code).toBe(0);
  });

  it('import rules - an engine module importing the cli fails the check, naming the rule and the import', async () => {
    const result = await cruise({ 'src/engine/run.ts': ['../cli/main.ts'], 'src/cli/main.ts': [] });
    expect(result.code).not.toBe(0);
    expect(result.output).toContain('no-upward-from-engine: src/engine/run.ts → src/cli/main.ts');
  });

  it('import rules - the task API importing the engine, or the dashboard importing the cli, fails the check', async () => {
    const result = await cruise({
      'src/task/define-task.ts': ['../engine/zx.ts'],
      'src/engine/zx.ts': [],
      'src/ui/data.ts': ['../cli/session.ts'],
      'src/cli/session.ts': [],
    });
    expect(result.code).not.toBe(0);
    expect(result.output).toContain('no-upward-from-task: src/task/define-task.ts → src/engine/zx.ts');
    expect(result.output).toContain('no-upward-from-ui: src/ui/data.ts → src/cli/session.ts');
  });

  it('import rules - a circle of type-only imports inside one layer fails the check', async () => {
    const result = await cruise({
      'src/engine/state/journal-lines.ts': ['./stage-state.ts'],
      'src/engine/state/stage-state.ts': ['./journal-lines.ts'],
    });
    expect(result.code).not.toBe(0);
    expect(result.output).toContain('no-circular: src/engine/state/journal-lines.ts');
  });
});
