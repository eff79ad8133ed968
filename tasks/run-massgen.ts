// run-massgen: one MassGen run of an experiment grid cell -> experiment.json (schema experiment).
import { readFile, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import type { ConfigFingerprint } from '../src/workflows/massgen/experiments/config-files.ts';
import { splitWords } from '../src/workflows/massgen/experiments/command-words.ts';
import { experimentRecord } from '../src/workflows/massgen/experiments/experiment-record.ts';
import { runMassgen } from '../src/workflows/massgen/experiments/massgen-process.ts';
import { findProgram } from '../src/workflows/massgen/experiments/find-program.ts';
import { logDirLine, progressLine } from '../src/workflows/massgen/experiments/progress-line.ts';
import { defineTask } from '../src/task/define-task.ts';

async function readJson<T>(root: string, rel: string, what: string): Promise<T> {
  try {
    return JSON.parse(await readFile(path.resolve(root, rel), 'utf8')) as T;
  } catch (error) {
    throw new Error(`run-massgen: cannot read the ${what} ${rel}: ${(error as Error).message}`);
  }
}

export default defineTask({
  name: 'run-massgen',
  description: 'Run MassGen once (--automation) on a config and a question, following status.json live; record experiment.json',
  params: z.object({
    massgen: z
      .string()
      .min(1)
      .default('massgen')
      .describe('The MassGen command, words split as a shell would (no shell runs): massgen, uv run massgen'),
    config: z.string().min(1).describe('The MassGen config (YAML), relative to the project root'),
    question: z.string().min(1),
    repeat: z.number().int().min(1).default(1).describe('Which run of this config and question (1..repeat)'),
    timeout: z.number().min(0).default(0).describe('Seconds before the run (its whole process group) is stopped; 0 for no limit'),
    stream_events: z.boolean().default(false).describe('Pass --stream-events (MassGen then prints LOG_DIR/STATUS on stderr)'),
    config_fingerprint: z.string().min(1).describe('The massgen-config stage output for this config'),
    version: z.string().min(1).describe('The massgen-version stage output'),
    poll_ms: z.number().int().min(50).default(500).describe('How often status.json is read'),
  }),
  outputs: { experiment: { schema: 'experiment', description: 'experiment.json: what ran, the log dir, exit code, winner, duration' } },
  preflight(params, { env, root }) {
    let words: string[];
    try {
      words = splitWords(params.massgen);
    } catch (error) {
      return [`param massgen: ${(error as Error).message}`];
    }
    const program = words[0];
    if (!program) return ['param massgen is empty: give the MassGen command, e.g. massgen or "uv run massgen"'];
    return findProgram(program, env, root)
      ? []
      : [`'${program}' (param massgen) was not found on PATH: install MassGen, or pass --param massgen="uv run massgen"`];
  },
  async run(ctx) {
    const { params } = ctx;
    const command = splitWords(params.massgen);
    const config = await readJson<ConfigFingerprint>(ctx.root, params.config_fingerprint, 'config fingerprint');
    const { version } = await readJson<{ version: string }>(ctx.root, params.version, 'MassGen version');
    const argv = [
      ...command,
      '--automation',
      ...(params.stream_events ? ['--stream-events'] : []),
      '--config',
      params.config,
      params.question,
    ];
    const startedAt = new Date();
    ctx.progress(0, 'starting');
    const outcome = await runMassgen({
      argv,
      cwd: ctx.root,
      // The stage span's TRACEPARENT among them, for a MassGen that joins the trace.
      env: { ...process.env, ...ctx.env },
      ...(params.timeout > 0 ? { timeoutMs: params.timeout * 1000 } : {}),
      signal: ctx.signal,
      pollMs: params.poll_ms,
      // The dashboard links a running cell to its live page from this line.
      onLogDir: (logDir) => ctx.log(logDirLine(path.relative(ctx.root, logDir).split(path.sep).join('/'))),
      onProgress: (status, elapsedMs) => {
        ctx.progress(status?.fraction ?? 0, progressLine(status, elapsedMs));
      },
    }).catch((error: NodeJS.ErrnoException) => {
      throw new Error(
        error.code === 'ENOENT'
          ? `run-massgen: '${command[0]}' was not found: install MassGen, or pass --param massgen="uv run massgen"`
          : `run-massgen: could not start '${params.massgen}': ${error.message}`,
      );
    });
    // Ctrl-C: no record, so that the next run starts this cell again.
    if (outcome.aborted) throw new Error('run-massgen: interrupted; its process group was stopped');
    const record = experimentRecord(
      ctx.root,
      { config, question: params.question, repeat: params.repeat, command, version, startedAt },
      outcome,
    );
    const out = ctx.outputs.experiment;
    if (!out) throw new Error('run-massgen: the stage must declare the output "experiment"');
    await mkdir(path.dirname(out), { recursive: true });
    await writeFile(out, `${JSON.stringify(record, null, 2)}\n`);
    const seconds = (record.duration_ms / 1000).toFixed(1);
    return {
      summary: record.ok
        ? `winner ${record.winner ?? 'none'} in ${seconds}s, ${record.log_dir}`
        : `FAILED (${record.timed_out ? 'timeout' : `exit ${record.exit_code ?? record.signal}`}) after ${seconds}s`,
    };
  },
});
