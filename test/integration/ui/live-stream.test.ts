// The dashboard's event stream against real runs: runs started by another process are tailed from
// their events.jsonl; a client that drops its connection mid-run and comes back with Last-Event-ID
// gets exactly what it missed, in order, nothing twice.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, tempProject, type TempProject } from '../../helpers/project.ts';
import { UiProcess } from './ui-process.ts';

let project: TempProject;
let ui: UiProcess;

const PIPELINE = `pipeline: chain
stages:
${Array.from({ length: 12 }, (_, i) => `  s${i}: { run: "echo line ${i}; cat ${i === 0 ? 'src/in.txt' : `out/s${i - 1}.txt`} > \${outputs.o}", inputs: [${i === 0 ? 'src/in.txt' : `out/s${i - 1}.txt`}], outputs: { o: out/s${i}.txt } }`).join('\n')}
`;

beforeAll(async () => {
  project = tempProject({ 'pipelines/chain.yaml': PIPELINE, 'src/in.txt': 'v1\n' });
  ui = new UiProcess(['ui'], project.root);
  await ui.ready;
});

afterAll(async () => {
  await ui?.stop();
  project?.cleanup();
});

describe('refinery ui event stream', () => {
  it('ui - a run made by refinery run is streamed live, event for event as in its events.jsonl', async () => {
    const seen: Array<Record<string, any>> = [];
    const ended = ui.nextEvent((m) => m.kind === 'run-event' && m.event.type === 'run-end', { collect: seen });
    const run = await runCli(['run', 'chain'], { cwd: project.root });
    expect(run.code, run.stderr).toBe(0);
    const end = await ended;
    const runId = end.event.runId as string;
    const logged = readFileSync(path.join(project.root, '.refinery', 'runs', runId, 'events.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const streamed = seen.filter((m) => m.kind === 'run-event' && m.event.runId === runId).map((m) => m.event as Record<string, unknown>);
    expect(streamed).toEqual(logged);
  });

  it('ui - a client that drops mid-run resumes from its last id with nothing lost or repeated', async () => {
    project.write('src/in.txt', 'v2\n');
    const before: Array<Record<string, any>> = [];
    // Drop the connection as soon as the new run's second stage has started.
    const dropPoint = ui.nextEvent((m) => m.kind === 'run-event' && m.event.type === 'stage-start' && m.event.stage === 's1', {
      collect: before,
      since: Number.MAX_SAFE_INTEGER,
    });
    const running = runCli(['run', 'chain'], { cwd: project.root });
    const dropped = await dropPoint;
    const run = await running;
    expect(run.code, run.stderr).toBe(0);
    const after: Array<Record<string, any>> = [];
    await ui.nextEvent((m) => m.kind === 'run-event' && m.event.type === 'run-end' && m.event.runId === dropped.event.runId, {
      collect: after,
      lastEventId: dropped.seq as number,
    });
    const all = [...before, ...after].filter((m) => m.kind === 'run-event' && m.event.runId === dropped.event.runId);
    const seqs = all.map((m) => m.seq as number);
    for (let i = 1; i < seqs.length; i += 1) expect(seqs[i]).toBe((seqs[i - 1] as number) + 1);
    expect(after[0]?.seq).toBe((dropped.seq as number) + 1);
    const logged = readFileSync(path.join(project.root, '.refinery', 'runs', dropped.event.runId as string, 'events.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(all.map((m) => m.event)).toEqual(logged);
  });

  it('ui - a client whose missed events are no longer kept is told to reload', async () => {
    // A number from another start of the server (started with the same --token): reload.
    const reset = await ui.nextEvent(() => true, { lastEventId: 10_000_000 });
    expect(reset.frame).toBe('reset');
    expect(reset.seq).toBeLessThan(10_000_000);
  });
});
