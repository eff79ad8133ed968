import { createHash } from 'node:crypto';
import { existsSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { describe, expect, it, onTestFinished } from 'vitest';
import { runCliProgram, stageEnds, tempProject, type TempProject } from '../../helpers/project.ts';
import { mtimeNs, setMtime } from '../../helpers/mtime.ts';
import { skipWithout, systemTool } from '../../helpers/system-tools.ts';
import { WatchProcess } from '../watch/watch-process.ts';
import { mulberry32 } from '../../../src/workflows/refine/seeded.ts';

// Incremental runs checked against a model of what they must do. A seeded random sequence of
// edits (content, same-size rewrites, an editor's rename over a file with its old mtime kept,
// mtime-only touches, outputs deleted or overwritten by hand) is applied to a project of
// 1,700 `run:` stages; after each, `refinery run` is started as a user's program starts it
// (bin/refinery.js as a program, or asking a running watch over its socket) and must leave
// every output exactly as a clean build would, having rerun exactly the stages whose inputs'
// content changed or whose outputs are not what they wrote. The project is large enough for
// the stage journal's index (a journal of 1 MiB or more) to be on the path.

const STAGES = 1700;
const COMMON = 5;
const STEPS = 18;
/** Reproduce a failure with REFINERY_MODEL_SEED=<the seed it names>. */
const SEEDS = process.env.REFINERY_MODEL_SEED ? [Number(process.env.REFINERY_MODEL_SEED)] : [20261202];
const SHA256SUM = systemTool('sha256sum');
// Both the watch and the runs asking it use dist/ (built by `npm test`): a watch answers only a client of its own build.
const FROM_DIST = { REFINERY_FROM_DIST: '1' };

const output = (i: number): string => `out/s${i}.txt`;
const source = (i: number): string => `src/f${i}.txt`;

/** Each stage reads its own source, mostly the previous stage's output, sometimes an earlier one and a shared source. */
function makeInputs(rand: () => number): string[][] {
  const all: string[][] = [];
  for (let i = 0; i < STAGES; i += 1) {
    const inputs = [source(i)];
    if (i % 13 !== 0) inputs.unshift(output(i - 1));
    if (i > 2 && rand() < 0.2) {
      const earlier = output(i - 2 - Math.floor(rand() * Math.min(18, i - 2)));
      if (!inputs.includes(earlier)) inputs.push(earlier);
    }
    if (rand() < 0.1) inputs.push(`src/common${Math.floor(rand() * COMMON)}.txt`);
    all.push(inputs);
  }
  return all;
}

function pipelineYaml(inputs: string[][]): string {
  const lines = inputs.map(
    (ins, i) => `  s${i}: { run: "sha256sum ${ins.join(' ')} > \${outputs.o}", inputs: [${ins.join(', ')}], outputs: { o: ${output(i)} } }`,
  );
  return `pipeline: graph\nstages:\n${lines.join('\n')}\n`;
}

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

/**
 * What the project must hold, and which stages a run must redo: a stage reruns when the
 * content it would write now differs from what it last wrote (an input's content changed), or
 * when its output on disk is not what it wrote (deleted, or overwritten by hand).
 */
class Model {
  readonly sources = new Map<string, string>();
  /** What each stage last wrote. */
  private readonly built: string[] = [];
  /** Stages whose output was deleted or overwritten since. */
  readonly disturbed = new Set<number>();

  constructor(readonly inputs: string[][]) {}

  /** Every output's content as a clean build would write it, and the stages a run must redo to get there. */
  expect(): { outputs: string[]; rerun: number[] } {
    const outputs: string[] = [];
    const rerun: number[] = [];
    this.inputs.forEach((ins, i) => {
      const content = ins
        .map((p) => {
          const upstream = /^out\/s(\d+)\.txt$/.exec(p);
          return `${sha256(upstream ? (outputs[Number(upstream[1])] as string) : (this.sources.get(p) as string))}  ${p}\n`;
        })
        .join('');
      outputs.push(content);
      if (content !== this.built[i] || this.disturbed.has(i)) rerun.push(i);
    });
    return { outputs, rerun };
  }

  /** A run succeeded: every stage's output is what it would write now. */
  settle(outputs: string[]): void {
    outputs.forEach((content, i) => (this.built[i] = content));
    this.disturbed.clear();
  }
}

/** One random edit of the project (on disk and in the model); returns what it did, for a failure's message. */
function edit(p: TempProject, model: Model, rand: () => number): string {
  const pick = (n: number): number => Math.floor(rand() * n);
  const anySource = (): string => (rand() < 0.1 ? `src/common${pick(COMMON)}.txt` : source(pick(STAGES)));
  const roll = rand();
  if (roll < 0.25) {
    const rel = anySource();
    const content = `${model.sources.get(rel)}more ${pick(1e6)}\n`;
    p.write(rel, content);
    model.sources.set(rel, content);
    return `appended to ${rel}`;
  }
  if (roll < 0.4) {
    // Same size, new bytes, written in place: the size and inode stay, the mtime moves.
    const rel = anySource();
    const old = model.sources.get(rel) as string;
    const content = old.replace(/[a-z]/g, (c) => String.fromCharCode(((c.charCodeAt(0) - 97 + 1 + pick(24)) % 26) + 97));
    p.write(rel, content);
    model.sources.set(rel, content);
    return `rewrote ${rel} in place, same size`;
  }
  if (roll < 0.55) {
    // An editor's save: a new file renamed over the old, same size, the old mtime kept: only the inode differs.
    const rel = anySource();
    const old = model.sources.get(rel) as string;
    const body = old.slice(0, -1);
    const content = `${body.slice(1)}${body[0]}\n`;
    const before = mtimeNs(p.path(rel));
    const staged = p.write(`${rel}.swp`, content);
    setMtime(staged, before);
    renameSync(staged, p.path(rel));
    model.sources.set(rel, content);
    return `renamed a new ${rel} over the old, same size and mtime`;
  }
  if (roll < 0.65) {
    const rel = anySource();
    const at = statSync(p.path(rel)).mtimeMs;
    setMtime(p.path(rel), BigInt(Math.round(at + 1000)) * 1_000_000n);
    return `touched ${rel} (mtime only)`;
  }
  if (roll < 0.75) {
    const rel = anySource();
    p.write(rel, model.sources.get(rel) as string);
    return `wrote ${rel} again with the same content`;
  }
  if (roll < 0.85) {
    const i = pick(STAGES);
    rmSync(p.path(output(i)));
    model.disturbed.add(i);
    return `deleted ${output(i)}`;
  }
  if (roll < 0.95) {
    const i = pick(STAGES);
    writeFileSync(p.path(output(i)), `edited by hand ${pick(1e6)}\n`);
    model.disturbed.add(i);
    return `overwrote ${output(i)} by hand`;
  }
  return 'nothing';
}

function setUp(seed: number): { p: TempProject; model: Model; rand: () => number } {
  const rand = mulberry32(seed);
  const model = new Model(makeInputs(rand));
  const files: Record<string, string> = { 'pipelines/graph.yaml': pipelineYaml(model.inputs) };
  for (let i = 0; i < STAGES; i += 1) files[source(i)] = `source ${i} says ${pick(rand)}\n`;
  for (let k = 0; k < COMMON; k += 1) files[`src/common${k}.txt`] = `common ${k} says ${pick(rand)}\n`;
  for (const [rel, content] of Object.entries(files)) if (rel.startsWith('src/')) model.sources.set(rel, content);
  const p = tempProject(files);
  // Hooks registered later run first: a watch started afterwards is stopped before the folder goes.
  onTestFinished(() => p.cleanup());
  return { p, model, rand };
}

function pick(rand: () => number): string {
  return Math.floor(rand() * 1e9).toString(36);
}

/** The outputs that differ from the model's, named (at most a few). */
function wrongOutputs(p: TempProject, expected: string[]): string[] {
  const wrong: string[] = [];
  expected.forEach((content, i) => {
    const file = p.path(output(i));
    const actual = existsSync(file) ? readFileSync(file, 'utf8') : '(missing)';
    if (actual !== content && wrong.length < 5) wrong.push(`${output(i)}: ${JSON.stringify(actual.slice(0, 120))}`);
  });
  return wrong;
}

async function runAndCheck(
  p: TempProject,
  model: Model,
  history: string[],
  options: { jobs: number; exactReruns: boolean },
): Promise<void> {
  const { outputs, rerun } = model.expect();
  const result = await runCliProgram(['run', 'graph', '-j', String(options.jobs), '--json'], { cwd: p.root, env: FROM_DIST });
  const context = `after: ${history.join('; ')}\nstderr: ${result.stderr.slice(-2000)}`;
  expect(result.code, context).toBe(0);
  expect(wrongOutputs(p, outputs), context).toEqual([]);
  if (options.exactReruns) {
    const ran = Object.entries(stageEnds(result.stdout))
      .filter(([, status]) => status === 'succeeded')
      .map(([stage]) => Number(stage.slice(1)))
      .sort((a, b) => a - b);
    expect(ran, context).toEqual(rerun);
  }
  model.settle(outputs);
}

describe('incremental runs against a model', () => {
  for (const seed of SEEDS) {
    it(`incremental runs - seed ${seed}: each run leaves what a clean build would, rerunning exactly what changed (journal index on)`, async ({
      skip,
    }) => {
      if (skipWithout(SHA256SUM)) skip();
      const { p, model, rand } = setUp(seed);
      const history: string[] = ['the first build'];
      await runAndCheck(p, model, history, { jobs: 2, exactReruns: true });
      history.length = 0;
      for (let step = 0; step < STEPS; step += 1) {
        const edits = 1 + Math.floor(rand() * 3);
        for (let e = 0; e < edits; e += 1) history.push(edit(p, model, rand));
        await runAndCheck(p, model, history, { jobs: 1 + Math.floor(rand() * 3), exactReruns: true });
        if (step === 0) expect(existsSync(p.path('.refinery/state/graph.jsonl.index'))).toBe(true);
        history.push('its run');
      }
    }, 180_000);

    it(`incremental runs through watch - seed ${seed}: a run asked of a running watch leaves what a clean build would`, async ({
      skip,
    }) => {
      if (skipWithout(SHA256SUM)) skip();
      const { p, model, rand } = setUp(seed + 1);
      await runAndCheck(p, model, ['the first build'], { jobs: 2, exactReruns: true });
      const watcher = new WatchProcess(['graph'], p.root, { env: FROM_DIST });
      onTestFinished(async () => {
        await watcher.stop();
      });
      await watcher.nth(1, 'run-end');
      await watcher.until(() => watcher.stderr.includes('answered by this watch'), 'the socket to be served');
      const history: string[] = [];
      for (let step = 0; step < STEPS; step += 1) {
        const edits = 1 + Math.floor(rand() * 3);
        for (let e = 0; e < edits; e += 1) history.push(edit(p, model, rand));
        // Asked at once, while the watch may still be reacting to the edits: the answer must hold them all.
        await runAndCheck(p, model, history, { jobs: 2, exactReruns: false });
        history.push('its run');
      }
    }, 180_000);
  }
});
