// The stage journal's index: where each stage's last line starts, kept beside a large journal so
// that a scoped open reads the lines it needs and the ones appended since, not the whole file.
// Whatever the index says, the records read are those of the journal.
import { appendFileSync, existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { INDEX_MIN_BYTES, INDEX_REFRESH_BYTES, journalIndexFile } from '../../../src/engine/state/journal-index.ts';
import { type StageRecord, StageState } from '../../../src/engine/state/stage-state.ts';
import { stageRecord, tempRootEachTest } from '../../helpers/stage-records.ts';

const t = tempRootEachTest('refinery-journal-index-');
const warn = t.warn;

const JOURNAL = () => path.join(t.root, '.refinery', 'state', 'p.jsonl');
const INDEX = () => journalIndexFile(JOURNAL());
/** Enough stages of ~1.7 KB records for a journal past INDEX_MIN_BYTES. */
const STAGES = Array.from({ length: Math.ceil(INDEX_MIN_BYTES / 1500) }, (_, i) => `s${i}`);

function record(stage: string, fingerprint = `fp-${stage}`): StageRecord {
  return stageRecord(stage, fingerprint, `run-${'r'.repeat(1500)}`);
}

/** A large journal, one line per stage, and its index: written by a scoped run that read it whole. */
function indexedJournal(): void {
  const state = new StageState(t.root, 'p', warn);
  for (const s of STAGES) state.commit(record(s));
  state.close();
  expect(statSync(JOURNAL()).size).toBeGreaterThan(INDEX_MIN_BYTES);
  expect(existsSync(INDEX())).toBe(false);
  const scoped = new StageState(t.root, 'p', warn, ['s0']);
  expect(scoped.compact()).toBeUndefined();
  scoped.close();
  expect(existsSync(INDEX())).toBe(true);
}

/** Overwrites the journal's line of `stage` in place with a line of the same length that is JSON but no entry. */
function damageInPlace(stage: string): number {
  const text = readFileSync(JOURNAL(), 'utf8');
  const start = text.indexOf(`{"s":"${stage}",`);
  const end = text.indexOf('\n', start);
  const damaged = `[${'0,'.repeat((end - start - 3) / 2)}0]`.padEnd(end - start, ' ');
  writeFileSync(JOURNAL(), text.slice(0, start) + damaged + text.slice(end), { flag: 'r+' });
  return text.slice(0, start).split('\n').length;
}

function setAsideFiles(): string[] {
  return readdirSync(path.dirname(JOURNAL())).filter((f) => f.startsWith('p.jsonl.corrupt-'));
}

describe('stage journal index', () => {
  it('StageState - a scoped open of a large journal with no index leaves one; a scoped open after reads the lines it needs through it', () => {
    indexedJournal();
    // A damaged line the index covers, of a stage not asked for: never read, so not found.
    damageInPlace('s7');
    const state = new StageState(t.root, 'p', warn, ['s1', 's500']);
    expect(state.get('s1')).toEqual(record('s1'));
    expect(state.get('s500')).toEqual(record('s500'));
    // Outside the scope, read through the index too.
    expect(state.get('s600')).toEqual(record('s600'));
    expect(state.get('none')).toBeUndefined();
    expect(t.warnings).toEqual([]);
    // Without the index, the scan parses the line that is not in the written form and finds it.
    rmSync(INDEX());
    new StageState(t.root, 'p', warn, ['s1']);
    expect(t.warnings).toEqual([expect.stringContaining('is not a journal entry')]);
  });

  it('StageState - lines appended past the index stand over the lines it points at; a torn one gives way to the line before', () => {
    indexedJournal();
    const run = new StageState(t.root, 'p', warn, ['s1', 's2']);
    run.drop('s1');
    run.commit(record('s1', 'fp-s1-new'));
    run.drop('s2');
    expect(run.compact()).toBeUndefined();
    run.close();
    appendFileSync(JOURNAL(), '{"s":"s3","f":"fp-s3-torn","r":{"stage":"s3","finger');
    const state = new StageState(t.root, 'p', warn, ['s1', 's2', 's3', 's4']);
    expect(state.get('s1')?.fingerprint).toBe('fp-s1-new');
    expect(state.get('s2')).toBeUndefined();
    expect(state.get('s3')).toEqual(record('s3'));
    expect(state.get('s4')).toEqual(record('s4'));
    expect(t.warnings).toEqual([]);
  });

  it('StageState - an index of another journal (the same content written anew) is not used, and is replaced', () => {
    indexedJournal();
    const index = readFileSync(INDEX());
    const text = readFileSync(JOURNAL());
    rmSync(JOURNAL());
    writeFileSync(JOURNAL(), text);
    writeFileSync(INDEX(), index);
    damageInPlace('s7');
    const state = new StageState(t.root, 'p', warn, ['s1']);
    // Read whole: the damaged line is found.
    expect(t.warnings).toEqual([expect.stringContaining('is not a journal entry')]);
    expect(state.get('s1')).toBeUndefined();
  });

  it('StageState - an index that points at the wrong lines gives way to the whole journal: the records are the journal’s', () => {
    indexedJournal();
    // The index's offsets of s1 and s2 swapped: each points at the other's line.
    const index = readFileSync(INDEX(), 'latin1');
    const at1 = index.indexOf(',"s1":');
    const at2 = index.indexOf(',"s2":');
    const value = (at: number) => index.slice(index.indexOf(':', at) + 1, index.indexOf('\n', at));
    const [v1, v2] = [value(at1), value(at2)];
    expect(v1.length).toBe(v2.length);
    const swapped = index.replace(`,"s1":${v1}\n`, `,"s1":${v2}\n`).replace(`,"s2":${v2}\n`, `,"s2":${v1}\n`);
    writeFileSync(INDEX(), swapped, 'latin1');
    const state = new StageState(t.root, 'p', warn, ['s1', 's2']);
    expect(state.get('s1')).toEqual(record('s1'));
    expect(state.get('s2')).toEqual(record('s2'));
    expect(t.warnings).toEqual([]);
    // The run that read the journal whole leaves an index that holds.
    expect(state.compact()).toBeUndefined();
    state.close();
    expect(new StageState(t.root, 'p', warn, ['s1']).get('s1')).toEqual(record('s1'));
  });

  it('StageState - a damaged line past the index sets the journal aside, named by its line in the whole journal', () => {
    indexedJournal();
    appendFileSync(JOURNAL(), `${JSON.stringify({ s: 's1', f: 'x', r: null })}\n`);
    const state = new StageState(t.root, 'p', warn, ['s1', 's2']);
    expect(t.warnings).toEqual([expect.stringContaining(`line ${STAGES.length + 1} is not a journal entry`)]);
    expect(state.get('s1')).toBeUndefined();
    expect(state.get('s2')).toBeUndefined();
    expect(setAsideFiles()).toHaveLength(1);
    expect(existsSync(INDEX())).toBe(false);
  });

  it('StageState - a compacted journal gets a new index', () => {
    indexedJournal();
    const run = new StageState(t.root, 'p', warn, ['s0']);
    for (let i = 0; i < STAGES.length; i += 1) run.commit(record('s0', `fp-s0-${i}`));
    const before = readFileSync(INDEX());
    expect(run.compact()).toBeUndefined();
    run.close();
    expect(readFileSync(INDEX()).equals(before)).toBe(false);
    // The new index points into the rewritten journal: a line it covers but never read is not found damaged.
    damageInPlace('s9');
    const state = new StageState(t.root, 'p', warn, ['s0', 's1']);
    expect(state.get('s0')?.fingerprint).toBe(`fp-s0-${STAGES.length - 1}`);
    expect(state.get('s1')).toEqual(record('s1'));
    expect(t.warnings).toEqual([]);
  });

  it('StageState - a journal compacted to less than INDEX_MIN_BYTES has no index', () => {
    indexedJournal();
    const small = new StageState(t.root, 'p', warn, STAGES);
    for (const s of STAGES.slice(10)) small.drop(s);
    expect(small.compact()).toBeUndefined();
    small.close();
    expect(statSync(JOURNAL()).size).toBeLessThan(INDEX_MIN_BYTES);
    expect(existsSync(INDEX())).toBe(false);
  });

  it('StageState - a run that makes or reads a large journal whole leaves its index once, with the lines it appended', () => {
    const build = new StageState(t.root, 'p', warn);
    for (const s of STAGES) build.commit(record(s));
    expect(build.compact()).toBeUndefined();
    const written = readFileSync(INDEX());
    // The object lives on (a watch's): its later runs leave the index as it is.
    build.commit(record('s1', 'fp-s1-later'));
    expect(build.compact()).toBeUndefined();
    build.close();
    expect(readFileSync(INDEX()).equals(written)).toBe(true);
    damageInPlace('s7');
    const state = new StageState(t.root, 'p', warn, ['s1', 's2']);
    expect(state.get('s1')?.fingerprint).toBe('fp-s1-later');
    expect(state.get('s2')).toEqual(record('s2'));
    expect(t.warnings).toEqual([]);
  });

  it('StageState - after a torn last line, the lines a run appends are indexed where they start', () => {
    const build = new StageState(t.root, 'p', warn);
    for (const s of STAGES) build.commit(record(s));
    build.close();
    appendFileSync(JOURNAL(), '{"s":"s3","f":"fp-s3-torn","r":{"stage":"s3","finger');
    const run = new StageState(t.root, 'p', warn, ['s3']);
    run.drop('s3');
    run.commit(record('s3', 'fp-s3-new'));
    expect(run.compact()).toBeUndefined();
    run.close();
    expect(existsSync(INDEX())).toBe(true);
    const state = new StageState(t.root, 'p', warn, ['s3', 's4']);
    expect(state.get('s3')?.fingerprint).toBe('fp-s3-new');
    expect(state.get('s4')).toEqual(record('s4'));
    // Read through the index: a damaged line it covers and no one asks for is not found.
    damageInPlace('s9');
    expect(new StageState(t.root, 'p', warn, ['s3']).get('s3')?.fingerprint).toBe('fp-s3-new');
    expect(t.warnings).toEqual([]);
  });

  it('StageState - lines past the index grown beyond INDEX_REFRESH_BYTES: the run reads the journal whole once and indexes it again', () => {
    indexedJournal();
    const covered = () => (JSON.parse(readFileSync(INDEX(), 'utf8').split('\n')[0] as string) as { covered: number }).covered;
    const first = covered();
    const small = new StageState(t.root, 'p', warn, ['s1']);
    small.commit(record('s1', 'fp-s1-a'));
    expect(small.compact()).toBeUndefined();
    small.close();
    expect(covered()).toBe(first);
    const big = new StageState(t.root, 'p', warn, ['s1']);
    for (let i = 0; statSync(JOURNAL()).size - first <= INDEX_REFRESH_BYTES; i += 1) big.commit(record(`s${i % 50}`, `fp-b-${i}`));
    expect(big.compact()).toBeUndefined();
    big.close();
    // Not rewritten (one line a stage), indexed again whole.
    expect(readFileSync(JOURNAL(), 'utf8').trimEnd().split('\n').length).toBeGreaterThan(STAGES.length + 1);
    expect(covered()).toBe(statSync(JOURNAL()).size);
    const state = new StageState(t.root, 'p', warn, ['s1', 's60']);
    expect(state.get('s60')).toEqual(record('s60'));
    expect(state.get('s1')?.fingerprint).toMatch(/^fp-b-/);
    expect(t.warnings).toEqual([]);
  });

  it('StageState - a journal removed by hand takes its index with it when the next run finds it gone', () => {
    indexedJournal();
    rmSync(JOURNAL());
    const state = new StageState(t.root, 'p', warn, ['s1']);
    expect(state.get('s1')).toBeUndefined();
    expect(existsSync(INDEX())).toBe(false);
  });
});
