import { writeFileSync } from 'node:fs';
import v8 from 'node:v8';
import vm from 'node:vm';
import { afterEach, describe, expect, it } from 'vitest';
import { tempProject, type TempProject } from '../../helpers/project.ts';
import { EventBus } from '../../../src/engine/events/bus.ts';
import { loadPipeline } from '../../../src/engine/session/open-pipeline.ts';
import { WatchDaemon } from '../../../src/engine/watch/watch-daemon.ts';
import type { WatchNotice } from '../../../src/engine/watch/types.ts';

let project: TempProject | undefined;
let daemon: WatchDaemon | undefined;

afterEach(async () => {
  await daemon?.stop();
  daemon = undefined;
  project?.cleanup();
  project = undefined;
});

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

function residentMb(): number {
  gc();
  gc();
  return process.memoryUsage().rss / 2 ** 20;
}

const FILES = 500;

describe('watch daemon soak', () => {
  it('WatchDaemon - 10,000 change events grow resident memory by less than 20 MB', async () => {
    const files: Record<string, string> = {
      'pipelines/p.yaml': `pipeline: p
stages:
  concat: { run: "cat data/*.txt > \${outputs.o}", inputs: ["data/*.txt"], outputs: { o: out/concat.txt } }
  size: { run: "wc -c < out/concat.txt > \${outputs.o}", inputs: [out/concat.txt], outputs: { o: out/size.txt } }
`,
    };
    for (let i = 0; i < FILES; i += 1) files[`data/${i}.txt`] = 'round 0\n';
    project = tempProject(files);
    const root = project.root;
    const loaded = await loadPipeline(root, project.path('pipelines/p.yaml'), {});
    if (!loaded.ok) throw new Error(JSON.stringify(loaded.diagnostics));
    let seen = 0;
    let target = Infinity;
    let reached: (() => void) | undefined;
    const failures: string[] = [];
    const notify = (n: WatchNotice): void => {
      if (n.kind === 'watch-error' || n.kind === 'reload-failed') failures.push(JSON.stringify(n));
      if (n.kind !== 'changes') return;
      seen += n.paths.filter((p) => p.startsWith('data/')).length;
      if (seen >= target) reached?.();
    };
    let runs = 0;
    daemon = await WatchDaemon.start({
      root,
      pipelines: [loaded.pipeline],
      overrides: {},
      debounceMs: 50,
      recheckMs: 0,
      onBusy: 'queue',
      concurrency: 2,
      keepGoing: false,
      notify,
      openRun: (runId, pipeline) => ({ bus: new EventBus(runId, pipeline), close: () => {} }),
      onRunEnd: (_p, result) => {
        runs += 1;
        if (result.status !== 'succeeded') failures.push(JSON.stringify(result));
      },
    });
    const round = async (n: number): Promise<void> => {
      target = seen + FILES;
      const done = new Promise<void>((resolve) => (reached = resolve));
      for (let i = 0; i < FILES; i += 1) writeFileSync(`${root}/data/${i}.txt`, `round ${n} file ${i}\n`);
      await done;
      await daemon?.whenIdle();
    };
    await daemon.whenIdle();
    for (let n = 1; n <= 5; n += 1) await round(n);
    const before = residentMb();
    const start = seen;
    let n = 6;
    while (seen - start < 10_000) await round(n++);
    const after = residentMb();
    expect(failures).toEqual([]);
    expect(seen - start).toBeGreaterThanOrEqual(10_000);
    expect(runs).toBeGreaterThanOrEqual(n - 1);
    expect(after - before).toBeLessThan(20);
    console.log(`soak: ${seen - start} change events, ${runs} runs, resident ${before.toFixed(1)} -> ${after.toFixed(1)} MB`);
  }, 240_000);
});
