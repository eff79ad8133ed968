import { appendFileSync, cpSync, existsSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { REPO_ROOT, tempProject, type TempProject } from '../../helpers/project.ts';
import { SchemaRegistry } from '../../../src/engine/artifacts/schema-registry.ts';
import { WatchProcess } from './watch-process.ts';

let project: TempProject | undefined;
let watcher: WatchProcess | undefined;

afterEach(async () => {
  await watcher?.stop();
  watcher = undefined;
  project?.cleanup();
  project = undefined;
});

const EXAMPLES = path.join(REPO_ROOT, 'examples', 'massgen_logs');
const OUTPUTS = new Set(['analysis.json', 'ANALYSIS_REPORT.md']);

/** Copies MassGen log dirs without analyses a previous run may have left beside them. */
function copyLog(from: string, to: string): void {
  cpSync(from, to, { recursive: true, filter: (src) => !OUTPUTS.has(path.basename(src)) });
}

describe('refinery watch on MassGen logs', () => {
  it('watch - a new turn directory in the logs folder is analyzed without a restart, reanalyzed as it changes, and retired when deleted', async () => {
    project = tempProject();
    const logs = readdirSync(EXAMPLES)
      .filter((d) => d.startsWith('log_'))
      .sort();
    const source = logs[0] as string;
    copyLog(path.join(EXAMPLES, source), project.path(`logs/${source}`));
    watcher = new WatchProcess(['analyze', '--param', 'logs=logs'], project.root);
    await watcher.nth(1, 'run-end');
    expect(watcher.count('stage-end', undefined, 'succeeded')).toBeGreaterThanOrEqual(1);
    expect(watcher.count('stage-end', undefined, 'failed')).toBe(0);

    const fresh = 'log_20991231_235959_000001';
    copyLog(path.join(EXAMPLES, source), project.path(`logs/${fresh}`));
    const id = `turn[${fresh}/turn_1]`;
    await watcher.nth(1, 'stage-end', id, 'succeeded');
    const analysis = JSON.parse(readFileSync(project.path(`logs/${fresh}/turn_1/analysis.json`), 'utf8')) as unknown;
    expect(new SchemaRegistry(REPO_ROOT).validate('turn-analysis', analysis)).toEqual({ ok: true });
    expect(watcher.stderr).toContain(`new stage ${id}`);

    const log = readdirSync(project.path(`logs/${fresh}/turn_1`)).find((d) => d.startsWith('attempt_')) as string;
    const before = watcher.count('stage-start', id);
    appendFileSync(project.path(`logs/${fresh}/turn_1/${log}/massgen.log`), 'one more line from a turn still being written\n');
    await watcher.nth(before + 1, 'stage-start', id);
    await watcher.nth(before + 1, 'stage-end', id, 'succeeded');

    rmSync(project.path(`logs/${fresh}`), { recursive: true });
    await watcher.until(() => watcher?.stderr.includes(`retired ${id}`) ?? false, 'the retired notice');
    expect(existsSync(project.path(`logs/${source}/turn_1/analysis.json`))).toBe(true);
  });
});
