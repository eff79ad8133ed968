// Clones of one project, `refinery worker` processes in them, and a coordinator, for the worker
// tests on a real mosquitto (MQTT 5) and nginx (WebDAV as the remote cache). Everything waits on
// what the processes print, never on time.
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  COPY_JSON_TASK,
  DEMO_REPORT_SCHEMA,
  events,
  startCli,
  tempProject,
  type CliResult,
  type TempProject,
} from '../../helpers/project.ts';

export const WORKER_KEY = `test-worker-key-${'x'.repeat(40)}`;

/** A pipeline of independent cells, a stage that gathers them (another worker reads their files), and a schema-checked report. */
export const GRID_PIPELINE = `pipeline: grid
stages:
  cell:
    foreach: [1, 2, 3, 4, 5, 6]
    run: ": @P@ && sleep 0.3 && echo cell \${item} $(cat src/seed.txt) > \${outputs.o}"
    inputs: [src/seed.txt]
    outputs: { o: "out/cell-\${item}.txt" }
  gather:
    run: "cat out/cell-*.txt > \${outputs.o}"
    inputs: ["out/cell-*.txt"]
    outputs: { o: out/all.txt }
    needs: [cell]
  report:
    task: copy-json
    with: { from: out/all.txt }
    inputs: [out/all.txt]
    outputs: { report: { path: out/report.json, schema: demo-report } }
    needs: [gather]
`;

export function projectClone(project: string, pipelines: Record<string, string>): TempProject {
  const files: Record<string, string> = {
    'refinery.config.yaml': `project: ${project}\n`,
    'tasks/copy-json.ts': COPY_JSON_TASK,
    'schemas/demo-report.schema.json': DEMO_REPORT_SCHEMA,
    'src/seed.txt': 'seed-42\n',
  };
  // @P@ (in a command, after the no-op `:`) makes each test's stages its own: the tests share one cache.
  for (const [name, text] of Object.entries(pipelines)) files[`pipelines/${name}.yaml`] = text.replaceAll('@P@', project);
  return tempProject(files);
}

export function uniqueProject(): string {
  return `wt-${randomBytes(4).toString('hex')}`;
}

export interface Proc {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves once stdout (or stderr) matches. */
  waitFor(pattern: RegExp, stream?: 'stdout' | 'stderr'): Promise<void>;
  exited: Promise<CliResult>;
  kill(signal: NodeJS.Signals): void;
}

export function spawnCli(args: string[], cwd: string, env: NodeJS.ProcessEnv = {}): Proc {
  const child = startCli(args, { cwd, env: { REFINERY_WORKER_KEY: WORKER_KEY, REFINERY_REMOTE_CACHE: '', ...env } });
  let out = '';
  let err = '';
  const waiters: Array<{ pattern: RegExp; stream: 'stdout' | 'stderr'; resolve: () => void }> = [];
  const check = (): void => {
    for (const w of [...waiters]) {
      if ((w.stream === 'stdout' ? out : err).match(w.pattern)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
    }
  };
  child.stdout?.on('data', (d: Buffer) => {
    out += d.toString();
    check();
  });
  child.stderr?.on('data', (d: Buffer) => {
    err += d.toString();
    check();
  });
  const exited = new Promise<CliResult>((resolve) =>
    child.on('close', (code, signal) => {
      for (const w of waiters.splice(0)) w.resolve();
      resolve({ code, signal, stdout: out, stderr: err });
    }),
  );
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    waitFor: (pattern, stream = 'stdout') =>
      new Promise<void>((resolve) => {
        waiters.push({ pattern, stream, resolve });
        check();
      }),
    exited,
    kill: (signal) => {
      if (!child.pid || child.exitCode !== null || child.signalCode !== null) return;
      try {
        process.kill(-child.pid, signal);
      } catch (error) {
        // Gone already (it ended between the check and the signal).
        if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
      }
    },
  };
}

export async function startWorker(clone: TempProject, name: string, broker: string, cache: string, ...extra: string[]): Promise<Proc> {
  const proc = spawnCli(['worker', '--broker', broker, '--remote-cache', cache, '-j', '2', '--name', name, ...extra], clone.root);
  await Promise.race([proc.waitFor(/taking jobs from/), proc.exited]);
  if (!proc.stdout().includes('taking jobs from')) throw new Error(`worker ${name} did not start: ${proc.stderr()}`);
  return proc;
}

export function stageEndsOf(stdout: string): Record<string, Record<string, unknown>> {
  const out: Record<string, Record<string, unknown>> = {};
  for (const e of events(stdout)) if (e.type === 'stage-end') out[e.stage as string] = e;
  return out;
}

export async function stopAll(procs: Proc[]): Promise<void> {
  for (const p of procs) p.kill('SIGKILL');
  await Promise.all(procs.map((p) => p.exited));
}
