import { spawnSync } from 'node:child_process';
import {
  closeSync,
  copyFileSync,
  existsSync,
  fstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  type Stats,
  statSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PrecheckPipe } from '../../../src/cli/precheck-pipe.ts';
import {
  PRECHECK_MIN_FILES,
  parsePrecheckAnswer,
  precheckAnswers,
  type PrecheckAnswer,
  precheckMarker,
  precheckVouch,
} from '../../../src/engine/state/noop-precheck.ts';
import { encodeNoopRecord, MISSING, type NoopRecord, UNSETTLED } from '../../../src/engine/state/noop-record.ts';
import { compareWithLastRun, dropManifest, manifestFile, writeNoopRecord } from '../../../src/engine/state/run-manifest.ts';
import { writeFileAtomicSync } from '../../../src/engine/state/atomic-file.ts';
import { REPO_ROOT, runCli, runCliProgram, tempProject } from '../../helpers/project.ts';
import { skipWithout, systemTool } from '../../helpers/system-tools.ts';
import { mtimeNs, setMtime } from '../../helpers/mtime.ts';

// bin/noop-precheck.pl against Node's own check (run-manifest.ts, compareWithLastRun) on the same
// record and the same disk: perl may only leave out a file Node's stat would find unchanged.

const PERL = systemTool('perl');
const SCRIPT = path.join(REPO_ROOT, 'bin', 'noop-precheck.pl');
const KEY = 'key';

let root: string;
let pipelineFile: string;

beforeEach(({ skip }) => {
  if (skipWithout(PERL)) skip();
  root = mkdtempSync(path.join(os.tmpdir(), 'refinery-precheck-'));
  pipelineFile = path.join(root, 'pipelines', 'p.yaml');
});

afterEach(() => rmSync(root, { recursive: true, force: true }));

/** What perl answers, run in the project root as the quick client runs it; undefined when it gives none. */
function perlAnswer(): { answer: PrecheckAnswer | undefined; bytes: number } {
  const code = 'do $ARGV[0] or die($@ || $!); my $answer = precheck_answer(); print $answer if defined $answer;';
  const result = spawnSync('perl', ['-e', code, SCRIPT], { cwd: root });
  expect(result.status, result.stderr.toString()).toBe(0);
  return { answer: parsePrecheckAnswer(result.stdout), bytes: result.stdout.length };
}

/** The paths perl marked as possibly changed. */
function perlChanged(answer: PrecheckAnswer, paths: readonly string[]): string[] {
  return paths.filter((_, i) => ((answer.bitmap[i >> 3] as number) >> (i & 7)) & 1);
}

function nodeChanged(): string[] {
  const comparison = compareWithLastRun(root, pipelineFile, KEY);
  if (!comparison) throw new Error('no comparison: the record was not read');
  return 'changed' in comparison ? comparison.changed.files : [];
}

function file(rel: string, content = 'content'): string {
  const abs = path.join(root, rel);
  mkdirSync(path.dirname(abs), { recursive: true });
  writeFileSync(abs, content);
  return abs;
}

/** As the run's check counts one: any failure (ENOENT, ENOTDIR) is no file. */
function statOrNothing(abs: string): Stats | undefined {
  try {
    return statSync(abs);
  } catch {
    return undefined;
  }
}

/** A record of `paths` as a run stats them now (size, mtimeMs, inode; MISSING when absent), some entries overridden. */
function record(paths: string[], sizes: Record<string, number> = {}): NoopRecord {
  const numbers = new Float64Array(3 * paths.length);
  paths.forEach((rel, i) => {
    const stat = statOrNothing(path.isAbsolute(rel) ? rel : path.resolve(root, rel));
    numbers[3 * i] = sizes[rel] ?? stat?.size ?? MISSING;
    numbers[3 * i + 1] = stat?.mtimeMs ?? 0;
    numbers[3 * i + 2] = stat?.ino ?? 0;
  });
  return { key: KEY, pipeline: 'p', stages: ['a'], skipped: {}, dirs: [], probes: [], paths, numbers };
}

function writeRecord(r: NoopRecord, pipeline = pipelineFile): string {
  const target = manifestFile(root, pipeline);
  mkdirSync(path.dirname(target), { recursive: true });
  writeFileAtomicSync(target, encodeNoopRecord(r));
  return target;
}

describe('noop pre-check', () => {
  it('noop pre-check - perl marks exactly the files Node finds changed, and the paths with .. it leaves to Node', () => {
    // Every way a file can stay or change, each on a file of its own.
    const same = ['same.txt', 'dir/deep/same.txt', 'naïve ünïcode 😀.txt', 'space and\nnewline.txt', 'folder', 'link-to-same'];
    for (const rel of ['same.txt', 'dir/deep/same.txt', 'naïve ünïcode 😀.txt', 'space and\nnewline.txt']) file(rel);
    mkdirSync(path.join(root, 'folder'));
    symlinkSync('same.txt', path.join(root, 'link-to-same'));
    const absolute = file('outside/abs.txt');
    const absoluteChanged = file('outside/abs-changed.txt');
    // Files of one size, each changed (or recorded unsettled) below in a way of its own.
    const changing = ['appended.txt', 'plus-1ns.txt', 'plus-1us.txt', 'minus-1s.txt', 'new-inode.txt', 'deleted.txt', 'unsettled.txt'];
    for (const rel of [...changing, 'target-a.txt']) file(rel, 'twelve bytes');
    file('target-b.txt', 'twelve bytez');
    symlinkSync('target-a.txt', path.join(root, 'retargeted'));
    symlinkSync('nowhere.txt', path.join(root, 'dangling'));
    symlinkSync('loop-b', path.join(root, 'loop-a'));
    symlinkSync('loop-a', path.join(root, 'loop-b'));
    file('dotdot/kept.txt');
    const paths = [
      ...same,
      absolute,
      absoluteChanged,
      ...changing,
      'still-missing.txt',
      'appeared.txt',
      'dangling',
      'loop-a',
      'same.txt/under-a-file',
      'retargeted',
      'dotdot/../dotdot/kept.txt',
    ];
    writeRecord(record(paths, { 'unsettled.txt': UNSETTLED }));

    writeFileSync(path.join(root, 'appended.txt'), 'twelve bytes and more');
    // mtimeMs, a double, keeps about a quarter of a microsecond here: Node sees a 1 µs step, and
    // a 1 ns step only when it happens to cross a rounding; perl must agree either way.
    setMtime(path.join(root, 'plus-1ns.txt'), mtimeNs(path.join(root, 'plus-1ns.txt')) + 1n);
    setMtime(path.join(root, 'plus-1us.txt'), mtimeNs(path.join(root, 'plus-1us.txt')) + 1000n);
    setMtime(path.join(root, 'minus-1s.txt'), mtimeNs(path.join(root, 'minus-1s.txt')) - 1_000_000_000n);
    // The same size and mtime in a new file: only the inode tells.
    const replaced = path.join(root, 'new-inode.txt');
    const kept = mtimeNs(replaced);
    copyFileSync(replaced, `${replaced}.new`);
    renameSync(`${replaced}.new`, replaced);
    setMtime(replaced, kept);
    unlinkSync(path.join(root, 'deleted.txt'));
    file('appeared.txt');
    writeFileSync(absoluteChanged, 'changed!');
    // A link now to another file of the same size and mtime: the inode tells.
    rmSync(path.join(root, 'retargeted'));
    setMtime(path.join(root, 'target-b.txt'), mtimeNs(path.join(root, 'target-a.txt')));
    symlinkSync('target-b.txt', path.join(root, 'retargeted'));

    const changed = nodeChanged();
    expect(new Set(changed.filter((p) => p !== 'plus-1ns.txt'))).toEqual(
      new Set([
        absoluteChanged,
        'appended.txt',
        'plus-1us.txt',
        'minus-1s.txt',
        'new-inode.txt',
        'deleted.txt',
        'unsettled.txt',
        'appeared.txt',
        'retargeted',
      ]),
    );
    const { answer } = perlAnswer();
    expect(answer).toBeDefined();
    // Perl leaves to Node, besides: paths with `..`, and a stat that failed other than for an
    // absent file (a loop of links: Node counts it missing, as recorded).
    const leftToNode = (p: string) => p.includes('..') || p === 'loop-a';
    expect(perlChanged(answer as PrecheckAnswer, paths)).toEqual(paths.filter((p) => changed.includes(p) || leftToNode(p)));
  });

  it('noop pre-check - an unchanged record: nothing marked, and the answer names the record and its identity', () => {
    const paths = Array.from({ length: 300 }, (_, i) => `src/f${i}.txt`);
    for (const rel of paths) file(rel, `file ${rel}`);
    const target = writeRecord(record(paths));
    expect(nodeChanged()).toEqual([]);
    const { answer } = perlAnswer();
    const stat = statSync(target);
    expect(answer).toMatchObject({ record: path.basename(target), inode: stat.ino, size: stat.size, mtimeMs: stat.mtimeMs, files: 300 });
    expect(perlChanged(answer as PrecheckAnswer, paths)).toEqual([]);
  });

  it('noop pre-check - the newest record is the one compared', () => {
    file('a.txt');
    writeRecord(record(['a.txt']), path.join(root, 'pipelines', 'older.yaml'));
    const newer = writeRecord(record(['a.txt', 'b.txt']));
    const older = manifestFile(root, path.join(root, 'pipelines', 'older.yaml'));
    setMtime(older, mtimeNs(newer) - 1_000_000_000n);
    expect(perlAnswer().answer?.record).toBe(path.basename(newer));
    setMtime(older, mtimeNs(newer) + 1n);
    expect(perlAnswer().answer?.record).toBe(path.basename(older));
  });

  it('noop pre-check - no answer for no record, a damaged one, or one written in the other byte order', () => {
    expect(perlAnswer().bytes).toBe(0);
    file('a.txt');
    const target = writeRecord(record(['a.txt']));
    const good = readFileSync(target);
    expect(perlAnswer().answer).toBeDefined();
    writeFileSync(target, good.subarray(0, good.length - 1));
    expect(perlAnswer().bytes).toBe(0);
    writeFileSync(target, Buffer.concat([Buffer.from('refinery noop 3\n'), good.subarray('refinery noop 2\n'.length)]));
    expect(perlAnswer().bytes).toBe(0);
    // A path list that does not split into as many paths as the header says, either way.
    const twoPaths = writeRecord(record(['a.txt', 'b.txt']));
    const listed = readFileSync(twoPaths);
    const at = listed.indexOf('a.txt\0b.txt');
    for (const [from, to] of [
      ['a.txt\0b.txt', 'a.txtxb.txt'],
      ['a.txt\0b.txt', 'a.txt\0b\0txt'],
    ] as const) {
      const edited = Buffer.from(listed);
      expect(edited.toString('latin1', at, at + from.length)).toBe(from);
      edited.write(to, at, 'latin1');
      writeFileSync(twoPaths, edited);
      expect(perlAnswer().bytes).toBe(0);
    }
    writeRecord(record(['a.txt']));
    const swapped = Buffer.from(good);
    const checkAt = swapped.length - 8 * 4;
    swapped.subarray(checkAt, checkAt + 8).reverse();
    writeFileSync(target, swapped);
    expect(perlAnswer().bytes).toBe(0);
  });
});

describe('noop pre-check - the statx call', () => {
  it("statx number - the machine from /proc, or from perl's own Config where the kernel has no such file: the same number", () => {
    const number = (archFile: string) => {
      const code = 'do $ARGV[0] or die($@ || $!); print statx_number($ARGV[1]) // "none";';
      return spawnSync('perl', ['-e', code, SCRIPT, archFile], { encoding: 'utf8' }).stdout;
    };
    const expected = { x64: '332', arm64: '291' }[process.arch as string] ?? 'none';
    expect(number('/proc/sys/kernel/arch')).toBe(expected);
    expect(number(path.join(root, 'no-such-file'))).toBe(expected);
  });
});

describe('precheck vouch', () => {
  function answered(): { answer: PrecheckAnswer; target: string; paths: string[] } {
    const paths = ['a.txt', 'b.txt', 'c.txt'];
    for (const rel of paths) file(rel);
    const target = writeRecord(record(paths));
    writeFileSync(path.join(root, 'b.txt'), 'changed');
    const { answer } = perlAnswer();
    if (!answer) throw new Error('perl gave no answer');
    return { answer, target, paths };
  }

  it('precheck vouch - holds for the record perl read, read from the root: only what perl marked is left to stat', () => {
    const { answer, target, paths } = answered();
    const vouch = precheckVouch(answer, root, target, root);
    expect(vouch?.record.paths).toEqual(paths);
    expect([...(vouch?.mayHaveChanged ?? [])]).toEqual([1]);
    const comparison = compareWithLastRun(root, pipelineFile, KEY, undefined, vouch);
    expect(comparison && 'changed' in comparison ? comparison.changed.files : []).toEqual(['b.txt']);
    expect(comparison?.checked).toEqual({ files: 3, vouched: 2 });
  });

  it('precheck vouch - none for a record written again since, another record, or another working folder', () => {
    const { answer, target } = answered();
    expect(precheckVouch(answer, root, target, path.join(root, 'dir'))).toBeUndefined();
    expect(precheckVouch(answer, root, manifestFile(root, path.join(root, 'pipelines', 'other.yaml')), root)).toBeUndefined();
    expect(precheckVouch(undefined, root, target, root)).toBeUndefined();
    // The same bytes again, by the rename every record is written with: a new inode.
    writeFileAtomicSync(target, readFileSync(target));
    expect(precheckVouch(answer, root, target, root)).toBeUndefined();
  });
});

describe('precheck pipe', () => {
  function answerFile(bytes: Buffer): number {
    const at = path.join(root, 'answer');
    writeFileSync(at, bytes);
    return openSync(at, 'r');
  }

  it('precheck pipe - the quick client names its own pid: a variable naming another is dropped, no descriptor touched', () => {
    const fd = answerFile(Buffer.alloc(0));
    const env: NodeJS.ProcessEnv = { REFINERY_PRECHECK_FD: `${fd}:${process.pid + 1}` };
    expect(PrecheckPipe.take(env, process.pid)).toBeUndefined();
    expect(env.REFINERY_PRECHECK_FD).toBeUndefined();
    expect(fstatSync(fd).isFile()).toBe(true);
    for (const value of ['1:1', `${fd}`, `x${fd}:${process.pid}`, `0:${process.pid}`])
      expect(PrecheckPipe.take({ REFINERY_PRECHECK_FD: value }, process.pid)).toBeUndefined();
    closeSync(fd);
  });

  it('precheck pipe - read once to its end and closed; a cut answer is none', () => {
    const bits = Buffer.from([0b101]);
    const whole = Buffer.concat([Buffer.from('refinery precheck 1 noop-0123456789abcdef.bin 7 99 1700000000 5 3\n'), bits]);
    const fd = answerFile(whole);
    const pipe = PrecheckPipe.take({ REFINERY_PRECHECK_FD: `${fd}:${process.pid}` }, process.pid);
    expect(pipe?.answer()).toEqual({
      record: 'noop-0123456789abcdef.bin',
      inode: 7,
      size: 99,
      mtimeMs: 1700000000 * 1e3 + 5 / 1e6,
      files: 3,
      bitmap: bits,
    });
    expect(() => fstatSync(fd)).toThrow(/EBADF/);
    expect(pipe?.answer()).toBeUndefined();
    expect(parsePrecheckAnswer(whole.subarray(0, whole.length - 1))).toBeUndefined();
    expect(parsePrecheckAnswer(Buffer.concat([whole, bits]))).toBeUndefined();
  });
});

describe('precheck pipe - through the CLI', () => {
  // What a user could see: no descriptor of the pre-check's reaches a command. (Node 20 passes
  // no inherited descriptor beyond the three standard ones to what it spawns, so this holds even
  // without run.ts closing the pipe; the close is kept so as not to rely on that.)
  it('precheck pipe - a stage run after a pre-checked touch sees the descriptors it sees without one', async () => {
    const p = tempProject({
      'src/x.txt': 'x',
      'pipelines/p.yaml':
        'pipeline: p\nstages:\n  fds: { run: "ls /proc/self/fd > ${outputs.o}", inputs: [src/x.txt], outputs: { o: out/fds } }\n',
    });
    try {
      const listing = () => readFileSync(p.path('out/fds'), 'utf8');
      expect((await runCli(['run', 'p'], { cwd: p.root })).code).toBe(0);
      const plain = listing();
      // A touch: the pre-check's answer is read, then the stage runs (the marker as a record
      // of 2,000 files would leave it).
      p.write('src/x.txt', 'x2');
      p.write('.refinery/state/precheck', '');
      const touched = await runCliProgram(['run', 'p', '--verbose'], { cwd: p.root });
      expect(touched.stderr).toContain('the pre-check vouched for');
      expect(listing()).toBe(plain);
    } finally {
      p.cleanup();
    }
  });
});

describe('precheck marker', () => {
  it('precheck marker - a no-op record of 2,000 files or more leaves it; a smaller one, or a dropped one, removes it', () => {
    const marker = precheckMarker(root);
    const files = (n: number) => Array.from({ length: n }, (_, i) => `f${i}.txt`);
    expect(writeNoopRecord(root, pipelineFile, record(files(PRECHECK_MIN_FILES)))).toBeUndefined();
    expect(existsSync(marker)).toBe(true);
    writeNoopRecord(root, pipelineFile, record(files(PRECHECK_MIN_FILES - 1)));
    expect(existsSync(marker)).toBe(false);
    writeNoopRecord(root, pipelineFile, record(files(PRECHECK_MIN_FILES + 1)));
    expect(existsSync(marker)).toBe(true);
    dropManifest(root, pipelineFile);
    expect(existsSync(marker)).toBe(false);
  });

  it('precheck marker - only where perl can answer: Linux on x86_64 and arm64', () => {
    expect(precheckAnswers('linux', 'x64')).toBe(true);
    expect(precheckAnswers('linux', 'arm64')).toBe(true);
    expect(precheckAnswers('linux', 'ia32')).toBe(false);
    expect(precheckAnswers('darwin', 'arm64')).toBe(false);
    expect(precheckAnswers('freebsd', 'x64')).toBe(false);
  });

  it('precheck marker - through the CLI: a run over 2,000 files is pre-checked next time, a small one starts Node at once', async () => {
    const many: Record<string, string> = {};
    for (let i = 0; i < PRECHECK_MIN_FILES; i += 1) many[`data/f${i}.txt`] = `${i}\n`;
    const p = tempProject({
      ...many,
      'src/x.txt': 'x',
      'pipelines/big.yaml':
        'pipeline: big\nstages:\n  all: { run: "cat data/*.txt > ${outputs.o}", inputs: ["data/*.txt"], outputs: { o: out/all } }\n',
      'pipelines/small.yaml':
        'pipeline: small\nstages:\n  x: { run: "cat src/x.txt > ${outputs.o}", inputs: [src/x.txt], outputs: { o: out/x } }\n',
    });
    try {
      const check = async (pipeline: string) => (await runCliProgram(['run', pipeline, '--verbose'], { cwd: p.root })).stderr;
      expect((await runCli(['run', 'big'], { cwd: p.root })).code).toBe(0);
      expect(existsSync(precheckMarker(p.root))).toBe(true);
      expect(await check('big')).toMatch(
        /up-to-date check: 20\d\d files the last run read, 0 looked at here \(the pre-check vouched for 20\d\d\): 0 changed/,
      );
      expect((await runCli(['run', 'small'], { cwd: p.root })).code).toBe(0);
      expect(existsSync(precheckMarker(p.root))).toBe(false);
      expect(await check('small')).toMatch(/up-to-date check: \d files the last run read, \d looked at here: 0 changed/);
    } finally {
      p.cleanup();
    }
  });
});
