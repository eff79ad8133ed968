import { afterEach, describe, expect, it, vi } from 'vitest';
import { tempProject, type TempProject } from '../../helpers/project.ts';
import { JobRunner } from '../../../src/engine/dispatch/worker-jobs.ts';
import type { Job } from '../../../src/engine/dispatch/messages.ts';
import type { RemoteCache } from '../../../src/engine/remote-cache/remote-cache.ts';
import { projectResolver } from '../../../src/engine/pipeline/resolve-names.ts';

const loads = vi.hoisted(() => ({ count: 0 }));
vi.mock('../../../src/engine/pipeline/cached-load.ts', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../../src/engine/pipeline/cached-load.ts')>();
  return {
    ...real,
    loadPipelineCached: (...args: Parameters<typeof real.loadPipelineCached>) => {
      loads.count += 1;
      return real.loadPipelineCached(...args);
    },
  };
});

const PIPELINE = `pipeline: grid
pools: { llm: 2, io: 2 }
stages:
  cell:
    foreach: [1, 2, 3, 4, 5, 6]
    pool: llm
    run: "echo \${item} > \${outputs.o}"
    outputs: { o: "out/cell-\${item}.txt" }
`;

function job(item: number): Job {
  return {
    kind: 'job',
    project: 'p',
    run: 'r1',
    job: `cell[${item}]`,
    attempt: 1,
    pipeline: 'pipelines/grid.yaml',
    params: {},
    stage: 'cell',
    instance: `cell[${item}]`,
    definition: 'd',
    fingerprint: 'f',
    parts: { code: 'c', params: 'p', inputs: {}, deps: {}, schemas: {} },
    skipped: [],
    files: [],
    leaseMs: 15_000,
    force: false,
  };
}

let project: TempProject | undefined;
afterEach(() => project?.cleanup());

function runner(root: string): JobRunner {
  return new JobRunner({
    root,
    sessionId: 'session-1',
    // Opening a job's pipeline reads nothing from the remote cache.
    remote: {} as RemoteCache,
    resolver: projectResolver(root),
    signal: new AbortController().signal,
    onEvent: () => undefined,
  });
}

describe('JobRunner', () => {
  it('JobRunner - jobs that arrive together load their pipeline once; a changed pipeline file is loaded again', async () => {
    project = tempProject({ 'pipelines/grid.yaml': PIPELINE });
    const jobs = runner(project.root);
    loads.count = 0;
    const pools = await Promise.all([1, 2, 3, 4, 5, 6].map((i) => jobs.poolOf(job(i))));
    expect(pools).toEqual(Array(6).fill('llm'));
    expect(loads.count).toBe(1);
    expect(await jobs.poolOf(job(1))).toBe('llm');
    expect(loads.count).toBe(1);
    project.write('pipelines/grid.yaml', PIPELINE.replace('pool: llm', 'pool: io'));
    expect(await jobs.poolOf(job(2))).toBe('io');
    expect(loads.count).toBe(2);
  });
});
