// The state files a run that checks one changed file reads in part: the stage journal, the file
// stamps and the keyed lines they are found by, the no-op record and the rule for settled stats.
import { appendFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FileHashes, type FileStamp } from '../../../src/engine/state/file-hashes.ts';
import { compareWritten, KeyedLines } from '../../../src/engine/state/keyed-lines.ts';
import { decodeNoopRecord, encodeNoopRecord, MISSING, type NoopRecord, UNSETTLED } from '../../../src/engine/state/noop-record.ts';
import { outputsDigest } from '../../../src/engine/state/outputs-digest.ts';
import { settledStat } from '../../../src/engine/state/settled-stat.ts';
import { mulberry32 } from '../../../src/workflows/refine/seeded.ts';
import { type StageRecord, StageState } from '../../../src/engine/state/stage-state.ts';
import { stageRecord } from '../../helpers/stage-records.ts';

let root = '';
let warnings: string[] = [];
const warn = (message: string): void => {
  warnings.push(message);
};

beforeEach(() => {
  root = mkdtempSync(path.join(os.tmpdir(), 'refinery-lazy-state-'));
  warnings = [];
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const record = (stage: string, fingerprint?: string): StageRecord => stageRecord(stage, fingerprint);

const JOURNAL = '.refinery/state/p.jsonl';

function journalWith(stages: string[]): void {
  const state = new StageState(root, 'p', warn);
  for (const s of stages) state.commit(record(s));
  state.close();
}

function setAsideFiles(rel: string): string[] {
  const dir = path.join(root, path.dirname(rel));
  return readdirSync(dir).filter((f) => f.startsWith(`${path.basename(rel)}.corrupt-`));
}

describe('stage journal read in part', () => {
  it('StageState - a scoped open gives the records in scope, and any other when asked for', () => {
    journalWith(['a', 'b', 'c']);
    const later = new StageState(root, 'p', warn, ['b']);
    later.commit(record('a', 'fp-a2'));
    later.drop('c');
    later.close();
    const state = new StageState(root, 'p', warn, ['a']);
    expect(state.get('a')?.fingerprint).toBe('fp-a2');
    expect(state.get('b')).toEqual(record('b'));
    expect(state.get('c')).toBeUndefined();
    expect(state.get('none')).toBeUndefined();
    expect(
      state
        .all()
        .map((r) => r.stage)
        .sort(),
    ).toEqual(['a', 'b']);
    expect(warnings).toEqual([]);
  });

  it('StageState - an id that JSON escapes is read back by a scoped open', () => {
    const odd = 'turn["a\\\\b"]\u00e9';
    journalWith(['plain', odd]);
    const state = new StageState(root, 'p', warn, [odd]);
    expect(state.get(odd)).toEqual(record(odd));
    expect(state.get('plain')).toEqual(record('plain'));
  });

  it('StageState - a journal of many chunks, with a line longer than a chunk, is scanned whole', () => {
    const state = new StageState(root, 'p', warn);
    for (let i = 0; i < 1500; i += 1) state.commit(record(`s${i}`));
    const big = record('big');
    for (let i = 0; i < 8000; i += 1) big.parts.inputs[`src/input-file-${i}.txt`] = 'h'.repeat(43);
    state.commit(big);
    for (let i = 0; i < 1500; i += 1) state.commit(record(`s${i}`, `fp2-${i}`));
    state.close();
    const size = readFileSync(path.join(root, JOURNAL)).length;
    expect(size).toBeGreaterThan(4 * 256 * 1024);
    const scoped = new StageState(root, 'p', warn, ['big', 's0', 's1499']);
    expect(scoped.get('big')).toEqual(big);
    expect(scoped.get('s0')?.fingerprint).toBe('fp2-0');
    expect(scoped.get('s1499')?.fingerprint).toBe('fp2-1499');
    expect(scoped.all()).toHaveLength(1501);
    expect(warnings).toEqual([]);
  });

  it("StageState - what a stage wrote is read from its line's head; lines without one (an earlier refinery's, dropped, torn) are read whole", () => {
    journalWith(['a', 'b', 'c', 'd']);
    const file = path.join(root, JOURNAL);
    const written = (stage: string, fingerprint: string): StageRecord => ({
      ...record(stage, fingerprint),
      outputs: { o: [1, 2, 3, `h-${stage}`] },
    });
    appendFileSync(file, `${JSON.stringify({ s: 'b', f: 'fp-b2', r: written('b', 'fp-b2') })}\n`);
    appendFileSync(file, `${JSON.stringify({ s: 'c', f: null })}\n`);
    appendFileSync(file, '{"s":"d","f":"fp-d9","o":"x","r":{"stage":"d","finger');
    const state = new StageState(root, 'p', warn, []);
    const whole = new StageState(root, 'p', warn);
    for (const stage of ['a', 'b', 'c', 'd', 'e']) expect(state.wrote(stage), stage).toBe(outputsDigest(whole.get(stage)));
    expect(state.wrote('b')).not.toBe(state.wrote('a'));
    expect(state.wrote('c')).toBe('none');
    expect(warnings).toEqual([]);
  });

  it('StageState - a head is read without parsing its record; a head that disagrees with its record is a damaged line once the record is read', () => {
    journalWith(['a']);
    const file = path.join(root, JOURNAL);
    const line = readFileSync(file, 'utf8').trim();
    const head = JSON.parse(line) as { o: string };
    expect(head.o).toBe(outputsDigest(record('a')));
    writeFileSync(file, `${line.replace(`"o":"${head.o}"`, '"o":"forged"')}\n`);
    const state = new StageState(root, 'p', warn, []);
    expect(state.wrote('a')).toBe('forged');
    expect(warnings).toEqual([]);
    expect(state.get('a')).toBeUndefined();
    expect(warnings).toEqual([expect.stringContaining(`${JOURNAL} line 1 is not a journal entry`)]);
  });

  it('StageState - what stages wrote is given from a journal opened through its index, and their records still are', () => {
    const first = new StageState(root, 'p', warn);
    for (let i = 0; i < 3000; i += 1) first.commit({ ...record(`s${i}`), runId: 'r'.repeat(400) });
    first.close();
    // A scoped open leaves an index for the runs after it.
    new StageState(root, 'p', warn, ['s0']).compact();
    expect(readdirSync(path.join(root, '.refinery/state')).some((f) => f.endsWith('.index'))).toBe(true);
    const state = new StageState(root, 'p', warn, ['s1']);
    for (const i of [0, 1500, 2999]) expect(state.wrote(`s${i}`)).toBe(outputsDigest(record(`s${i}`)));
    expect(state.get('s42')).toEqual({ ...record('s42'), runId: 'r'.repeat(400) });
    expect(warnings).toEqual([]);
  });

  it('StageState - a torn last line of a stage gives way to its line before, quietly', () => {
    journalWith(['a', 'b']);
    appendFileSync(path.join(root, JOURNAL), '{"s":"a","f":"fp-a9","r":{"stage":"a","finger');
    const state = new StageState(root, 'p', warn, ['a']);
    expect(state.get('a')).toEqual(record('a'));
    // The next line starts on a line of its own.
    state.commit(record('b', 'fp-b2'));
    state.close();
    expect(new StageState(root, 'p', warn).get('b')?.fingerprint).toBe('fp-b2');
    expect(warnings).toEqual([]);
  });

  it('StageState - a line that is no entry, found in scope: set aside at once, no record of it is given', () => {
    journalWith(['a', 'b']);
    appendFileSync(path.join(root, JOURNAL), `${JSON.stringify({ s: 'b', f: 'x', r: { stage: 'b' } })}\n`);
    const state = new StageState(root, 'p', warn, ['a', 'b']);
    expect(warnings).toEqual([expect.stringContaining(`${JOURNAL} line 3 is not a journal entry`)]);
    expect(state.get('a')).toBeUndefined();
    expect(state.get('b')).toBeUndefined();
    expect(setAsideFiles(JOURNAL)).toHaveLength(1);
  });

  it('StageState - a line not in the written form is parsed by the scan: one that is no entry sets the journal aside', () => {
    journalWith(['a']);
    appendFileSync(path.join(root, JOURNAL), '[1,2]\n');
    const state = new StageState(root, 'p', warn, []);
    expect(warnings).toEqual([expect.stringContaining('line 2 is not a journal entry')]);
    expect(state.get('a')).toBeUndefined();
  });

  it('StageState - a damaged line found after opening (outside the scope) sets the journal aside; what the run wrote stays', () => {
    journalWith(['a', 'b', 'c']);
    appendFileSync(path.join(root, JOURNAL), `${JSON.stringify({ s: 'c', f: 'x', r: null })}\n`);
    const state = new StageState(root, 'p', warn, ['a']);
    expect(state.get('a')).toEqual(record('a'));
    state.commit(record('b', 'fp-b2'));
    expect(warnings).toEqual([]);
    expect(state.get('c')).toBeUndefined();
    expect(warnings).toEqual([expect.stringContaining(`${JOURNAL} line 4 is not a journal entry`)]);
    // The records read from the damaged journal are forgotten; this run's own stay, and are written anew.
    expect(state.get('a')).toBeUndefined();
    expect(state.get('b')?.fingerprint).toBe('fp-b2');
    state.commit(record('d'));
    state.close();
    const next = new StageState(root, 'p', warn);
    expect(next.get('d')).toEqual(record('d'));
    expect(next.get('a')).toBeUndefined();
  });

  it('StageState - a journal grown a quarter past its stages is compacted, the lines not read copied as written', () => {
    const stages = Array.from({ length: 400 }, (_, i) => `s${i}`);
    journalWith(stages);
    // s1's last line cut short: its line before stands, in the compacted journal too.
    appendFileSync(path.join(root, JOURNAL), `${JSON.stringify({ s: 's1', f: null })}\n{"s":"s1","f":"fp-x","r":{"sta`);
    const state = new StageState(root, 'p', warn, ['s0']);
    for (let i = 0; i < 48; i += 1) {
      state.drop('s0');
      state.commit(record('s0', `fp-s0-${i}`));
    }
    // 400 + 2 + 96 lines: not more than a quarter past 400 stages.
    expect(state.compact()).toBeUndefined();
    expect(readFileSync(path.join(root, JOURNAL), 'utf8').trimEnd().split('\n')).toHaveLength(498);
    state.drop('s0');
    state.commit(record('s0', 'fp-s0-last'));
    state.drop('s2');
    state.close();
    expect(state.compact()).toBeUndefined();
    const lines = readFileSync(path.join(root, JOURNAL), 'utf8').trimEnd().split('\n');
    // One line per stage with a record: s1 dropped (its last whole line), s2 dropped by this run.
    expect(lines).toHaveLength(398);
    const again = new StageState(root, 'p', warn);
    expect(again.get('s0')?.fingerprint).toBe('fp-s0-last');
    expect(again.get('s1')).toBeUndefined();
    expect(again.get('s2')).toBeUndefined();
    expect(again.get('s399')).toEqual(record('s399'));
    expect(warnings).toEqual([]);
  });

  it('StageState - a damaged line found while compacting sets the journal aside; the new one holds the records of this run', () => {
    journalWith(Array.from({ length: 100 }, (_, i) => `s${i}`));
    // s5's last line: cut short, and its line before is no entry.
    appendFileSync(path.join(root, JOURNAL), `${JSON.stringify({ s: 's5', f: 'x', r: 1 })}\n{"s":"s5","f":"fp","r":{`);
    const state = new StageState(root, 'p', warn, ['s0']);
    for (let i = 0; i < 70; i += 1) state.commit(record('s0', `fp-s0-${i}`));
    expect(warnings).toEqual([]);
    expect(state.compact()).toBeUndefined();
    expect(warnings).toEqual([expect.stringContaining('line 101 is not a journal entry')]);
    const again = new StageState(root, 'p', warn);
    expect(again.all().map((r) => [r.stage, r.fingerprint])).toEqual([['s0', 'fp-s0-69']]);
  });
});

const HASHES = '.refinery/cache/file-hashes.json';
const OLD = Date.now() / 1000 - 3600;

/** The stamps the file holds, as a reader of its form sees them: the last line of a path stands, null forgets it. */
function savedStamps(): Record<string, FileStamp> {
  const [header, ...lines] = readFileSync(path.join(root, HASHES), 'utf8').trimEnd().split('\n');
  expect(JSON.parse(header as string)).toMatchObject({ form: 'file stamps, one a line' });
  const out: Record<string, FileStamp> = {};
  for (const line of lines) {
    let entry: Record<string, FileStamp | null>;
    try {
      entry = JSON.parse(`{${line.slice(1)}}`) as Record<string, FileStamp | null>;
    } catch {
      continue; // cut short
    }
    for (const [rel, stamp] of Object.entries(entry)) {
      if (stamp) out[rel] = stamp;
      else delete out[rel];
    }
  }
  return out;
}

function fileLines(): string[] {
  return readFileSync(path.join(root, HASHES), 'utf8').trimEnd().split('\n');
}

function source(rel: string, content: string): void {
  const file = path.join(root, rel);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, content);
  utimesSync(file, OLD, OLD);
}

describe('file stamps read in part', () => {
  it('FileHashes - stamps are read back from the one-a-line form and a save appends only the changed lines', () => {
    for (let i = 0; i < 30; i += 1) source(`src/f${i}.txt`, `content ${i}`);
    const first = new FileHashes(root, warn);
    const stamps = new Map<string, FileStamp | undefined>();
    for (let i = 0; i < 30; i += 1) stamps.set(`src/f${i}.txt`, first.stamp(`src/f${i}.txt`));
    expect(first.save()).toBeUndefined();
    expect(fileLines()).toHaveLength(31);
    source('src/f3.txt', 'changed, and longer');
    rmSync(path.join(root, 'src/f4.txt'));
    const second = new FileHashes(root, warn);
    expect(second.stamp('src/f3.txt')?.[3]).not.toBe(stamps.get('src/f3.txt')?.[3]);
    expect(second.stamp('src/f4.txt')).toBeUndefined();
    expect(second.save()).toBeUndefined();
    // The new stamp of f3 and f4 forgotten: two lines more, the others as they were.
    expect(fileLines()).toHaveLength(33);
    const after = savedStamps();
    expect(after['src/f4.txt']).toBeUndefined();
    expect(after['src/f3.txt']?.[3]).toBe(second.stamp('src/f3.txt')?.[3]);
    expect(after['src/f7.txt']).toEqual(stamps.get('src/f7.txt'));
    // Many lookups go through an index of the lines: the same stamps, the last line of each.
    const third = new FileHashes(root, warn);
    for (let i = 0; i < 30; i += 1) expect(third.stamp(`src/f${i}.txt`)).toEqual(after[`src/f${i}.txt`]);
    expect(warnings).toEqual([]);
  });

  it('FileHashes - a line cut short by a crash is ignored, and the next save starts a line of its own', () => {
    source('src/a.txt', 'a');
    source('src/b.txt', 'b');
    const first = new FileHashes(root, warn);
    const a = first.stamp('src/a.txt');
    first.save();
    appendFileSync(path.join(root, HASHES), ',"src/a.txt":[1,17000');
    const second = new FileHashes(root, warn);
    expect(second.stamp('src/a.txt')).toEqual(a);
    const b = second.stamp('src/b.txt');
    expect(second.save()).toBeUndefined();
    expect(savedStamps()).toEqual({ 'src/a.txt': a, 'src/b.txt': b });
    expect(warnings).toEqual([]);
  });

  it('FileHashes - appends that double the file make the next save write it whole, one line a path', () => {
    source('src/a.txt', 'a');
    for (let round = 0; round < 400; round += 1) {
      const hashes = new FileHashes(root, warn);
      hashes.remember('src/a.txt', [round, 1, 2, 'h'.repeat(200)]);
      expect(hashes.save()).toBeUndefined();
    }
    expect(fileLines().length).toBeLessThan(400);
    expect(savedStamps()).toEqual({ 'src/a.txt': [399, 1, 2, 'h'.repeat(200)] });
  });

  it('FileHashes - appends a quarter past the stamps written whole make the next save write it whole (the lines a run indexes stay few)', () => {
    const names = Array.from({ length: 2000 }, (_, i) => `src/f${i}.txt`);
    const first = new FileHashes(root, warn);
    for (const name of names) first.remember(name, [1, 2, 3, 'h'.repeat(43)]);
    expect(first.save()).toBeUndefined();
    const whole = readFileSync(path.join(root, HASHES)).length;
    let rounds = 0;
    while (rounds === 0 || fileLines().length > names.length + 1) {
      const hashes = new FileHashes(root, warn);
      hashes.remember(`src/f${rounds % 2000}.txt`, [rounds, 2, 3, 'h'.repeat(200)]);
      expect(hashes.save()).toBeUndefined();
      rounds += 1;
      if (rounds === 1) expect(fileLines().length).toBe(names.length + 2);
      expect(readFileSync(path.join(root, HASHES)).length).toBeLessThan(whole * 1.25 + 65_536 + 512);
    }
    // Written whole again once the appends passed a quarter of the stamps and 64 KiB: not at double.
    expect(rounds).toBeLessThan(Math.ceil((whole + 65_536) / 250));
    expect(savedStamps()[`src/f${(rounds - 1) % 2000}.txt`]).toEqual([rounds - 1, 2, 3, 'h'.repeat(200)]);
  });

  it('FileHashes - a file written whole holds its lines sorted by path, and every stamp is read back from it, appended ones first', () => {
    const names = Array.from({ length: 300 }, (_, i) => `src/${(i * 7919) % 300}-f.txt`);
    for (const name of names) source(name, `content of ${name}`);
    const first = new FileHashes(root, warn);
    const stamps = new Map(names.map((n) => [n, first.stamp(n)]));
    expect(first.save()).toBeUndefined();
    const [header, ...lines] = fileLines();
    expect(JSON.parse(header as string)).toMatchObject({ sorted: true });
    const keys = lines.map((l) => l.slice(1, l.indexOf('":') + 1));
    expect(keys).toEqual([...keys].sort(compareWritten));
    source('src/7-f.txt', 'changed since');
    const second = new FileHashes(root, warn);
    const changed = second.stamp('src/7-f.txt');
    expect(changed?.[3]).not.toBe(stamps.get('src/7-f.txt')?.[3]);
    expect(second.save()).toBeUndefined();
    expect(fileLines()).toHaveLength(302);
    const third = new FileHashes(root, warn);
    for (const name of names) expect(third.stamp(name)).toEqual(name === 'src/7-f.txt' ? changed : stamps.get(name));
    expect(warnings).toEqual([]);
  });

  it('FileHashes - a file an earlier refinery wrote whole, in no order and without "sorted", is read by search, and stays unsorted when appended to', () => {
    const names = Array.from({ length: 40 }, (_, i) => `src/${39 - i}.txt`);
    for (const name of names) source(name, `content of ${name}`);
    const stamps = new Map(names.map((n) => [n, new FileHashes(root, warn).stamp(n) as FileStamp]));
    const body = names.map((n) => `,${JSON.stringify(n)}:${JSON.stringify(stamps.get(n))}\n`).join('');
    mkdirSync(path.join(root, '.refinery/cache'), { recursive: true });
    writeFileSync(path.join(root, HASHES), `${JSON.stringify({ form: 'file stamps, one a line', bytes: body.length })}\n${body}`);
    const hashes = new FileHashes(root, warn);
    for (const name of names) expect(hashes.stamp(name)).toEqual(stamps.get(name));
    hashes.remember('src/new.txt', [1, 2, 3, 'h']);
    expect(hashes.save()).toBeUndefined();
    expect(JSON.parse(fileLines()[0] as string)).not.toHaveProperty('sorted');
    const again = new FileHashes(root, warn);
    for (const name of names) expect(again.stamp(name)).toEqual(stamps.get(name));
    expect(warnings).toEqual([]);
  });

  it('FileHashes - a file in the older whole-JSON form is read and saved in the one-a-line form', () => {
    source('src/a.txt', 'a');
    const stamp = new FileHashes(root, warn).stamp('src/a.txt') as FileStamp;
    mkdirSync(path.join(root, '.refinery/cache'), { recursive: true });
    writeFileSync(path.join(root, HASHES), JSON.stringify({ 'src/a.txt': stamp }));
    const hashes = new FileHashes(root, warn);
    expect(hashes.stamp('src/a.txt')).toEqual(stamp);
    expect(hashes.save()).toBeUndefined();
    expect(fileLines()[1]).toBe(`,"src/a.txt":${JSON.stringify(stamp)}`);
    expect(warnings).toEqual([]);
  });

  it('FileHashes - a malformed stamp found when it is looked up sets the file aside; the stamps of the run are saved', () => {
    source('src/a.txt', 'a');
    source('src/b.txt', 'b');
    const first = new FileHashes(root, warn);
    first.stamp('src/a.txt');
    first.stamp('src/b.txt');
    first.save();
    const file = path.join(root, HASHES);
    appendFileSync(file, ',"src/b.txt":[1,"x"]\n');
    const hashes = new FileHashes(root, warn);
    expect(hashes.stamp('src/a.txt')?.[3]).toBeTypeOf('string');
    expect(warnings).toEqual([]);
    expect(hashes.stamp('src/b.txt')?.[3]).toBeTypeOf('string');
    expect(warnings).toEqual([expect.stringContaining(`${HASHES} has a malformed stamp for 'src/b.txt'`)]);
    expect(setAsideFiles(HASHES)).toHaveLength(1);
    source('src/c.txt', 'c');
    hashes.remember('src/c.txt', [1, 2, 3, 'h']);
    expect(hashes.save()).toBeUndefined();
    // a's stamp went with the file set aside; b's, hashed again, and c's are this run's.
    expect(Object.keys(savedStamps())).toEqual(['src/b.txt', 'src/c.txt']);
  });
});

describe('keyed lines', () => {
  const keys = ['plain', 'with "quotes"', 'back\\slash', 'new\nline', 'ünïcode', 'a', 'a:b', ''];
  const text = `{"":"header"\n${keys.map((k, i) => `,${JSON.stringify(k)}:[${i}]\n`).join('')}}\n`;

  it('KeyedLines - every key is found by search and by index, whatever JSON escapes in it; a key written again at its last line', () => {
    const searched = new KeyedLines(text, { searchesBeforeIndex: 100 });
    const indexed = new KeyedLines(text, { searchesBeforeIndex: 0 });
    keys.forEach((key, i) => {
      expect(searched.value(key)).toBe(`[${i}]`);
      expect(indexed.value(key)).toBe(`[${i}]`);
    });
    const again = new KeyedLines(`${text},"a":["again"]\n`, { searchesBeforeIndex: 100 });
    expect(again.value('a')).toBe('["again"]');
    expect(new KeyedLines(again.text, { searchesBeforeIndex: 0 }).value('a')).toBe('["again"]');
    for (const lines of [searched, indexed]) {
      expect(lines.value('missing')).toBeUndefined();
      expect(lines.value('plai')).toBeUndefined();
      expect(lines.value('"plain"')).toBeUndefined();
    }
  });
});

describe('keyed lines written sorted', () => {
  const keys = ['plain', 'with "quotes"', 'back\\slash', 'new\nline', 'ünïcode', 'a', 'a b', 'a:b', 'ab', '', 'z'.repeat(300)];
  const written = keys.map((k) => JSON.stringify(k)).sort(compareWritten);
  const header = '{"form":"test"}\n';
  const body = written.map((w, i) => `,${w}:[${i}]\n`).join('');
  const sorted = { start: header.length, end: header.length + body.length };

  it('KeyedLines - every key of a sorted region is found by halving it, whatever JSON escapes in it', () => {
    const lines = new KeyedLines(`${header}${body}`, { sorted, searchesBeforeIndex: 0 });
    written.forEach((w, i) => expect(lines.value(JSON.parse(w) as string)).toBe(`[${i}]`));
    for (const missing of ['missing', 'plai', 'a ', '"plain"', 'zz', '\u0000', 'z'.repeat(299)])
      expect(lines.value(missing)).toBeUndefined();
  });

  it('KeyedLines - a line appended after the sorted region stands over the sorted line of its key', () => {
    const lines = new KeyedLines(`${header}${body},"a":["again"]\n,"new":[1]\n`, { sorted });
    expect(lines.value('a')).toBe('["again"]');
    expect(lines.value('new')).toBe('[1]');
    expect(lines.value('plain')).toBe(`[${written.indexOf('"plain"')}]`);
  });

  it('KeyedLines - 500 random keys written sorted, some written again after: each lookup gives the last line of its key', () => {
    const rand = mulberry32(14);
    const alphabet = ['a', 'b', 'z', '/', '.', ' ', '!', '"', '\\', '\n', 'é', '😀', '0', '~'];
    const randomKey = (): string =>
      Array.from({ length: 1 + Math.floor(rand() * 8) }, () => alphabet[Math.floor(rand() * alphabet.length)]).join('');
    const keys = [...new Set(Array.from({ length: 500 }, randomKey))];
    const last = new Map(keys.map((k, i) => [k, `[${i}]`]));
    const sortedBody = keys
      .map((k) => [JSON.stringify(k), last.get(k) as string] as const)
      .sort(([a], [b]) => compareWritten(a, b))
      .map(([w, v]) => `,${w}:${v}\n`)
      .join('');
    let appended = '';
    for (let i = 0; i < 60; i += 1) {
      const k = rand() < 0.8 ? (keys[Math.floor(rand() * keys.length)] as string) : randomKey();
      last.set(k, `["again ${i}"]`);
      appended += `,${JSON.stringify(k)}:["again ${i}"]\n`;
    }
    const text = `${header}${sortedBody}${appended}`;
    const lines = new KeyedLines(text, { sorted: { start: header.length, end: header.length + sortedBody.length } });
    for (const [k, v] of last) expect(lines.value(k)).toBe(v);
    for (let i = 0; i < 200; i += 1) {
      const k = randomKey();
      if (!last.has(k)) expect(lines.value(k)).toBeUndefined();
    }
  });

  it('KeyedLines - lines out of order or not in the form are not found (a miss, never another key), and the rest still are', () => {
    const shuffled = `${header},"b":[0]\n,"a":[1]\nnot a line\n,"c":[2]\n`;
    const lines = new KeyedLines(shuffled, { sorted: { start: header.length, end: shuffled.length } });
    const right: Record<string, string> = { a: '[1]', b: '[0]', c: '[2]' };
    for (const key of ['a', 'b', 'c']) expect([undefined, right[key]]).toContain(lines.value(key));
    expect(lines.value('d')).toBeUndefined();
    // A region that does not start and end at a line is not taken for a sorted one: keys are searched for.
    const unaligned = new KeyedLines(`${header}${body}`, { sorted: { start: header.length + 1, end: sorted.end } });
    written.forEach((w, i) => expect(unaligned.value(JSON.parse(w) as string)).toBe(`[${i}]`));
  });
});

describe('no-op record format', () => {
  const sample: NoopRecord = {
    key: 'k',
    pipeline: 'p',
    stages: ['a', 'b'],
    skipped: { b: 'when: condition is false' },
    dirs: ['docs', 1234.5, 'gone', null],
    probes: ['flag.txt', true],
    paths: ['src/ä.txt', 'out/a', '/etc/hosts'],
    numbers: new Float64Array([3, 1_700_000_000_123.4568, 42, MISSING, 0, 0, UNSETTLED, 1_700_000_000_000, 7]),
  };

  it('noop record - encoded and decoded, every field comes back exactly', () => {
    const decoded = decodeNoopRecord(encodeNoopRecord(sample));
    expect(decoded).toEqual(sample);
    const empty = { ...sample, paths: [], numbers: new Float64Array(0) };
    expect(decodeNoopRecord(encodeNoopRecord(empty))).toEqual(empty);
  });

  it('noop record - cut short, too long, another byte order or another format: a reason, not a record', () => {
    const bytes = encodeNoopRecord(sample);
    expect(decodeNoopRecord(bytes.subarray(0, bytes.length - 8))).toBe('is cut short or too long');
    expect(decodeNoopRecord(Buffer.concat([bytes, Buffer.alloc(8)]))).toBe('is cut short or too long');
    const swapped = Buffer.from(bytes);
    const at = swapped.length - 8 * (1 + sample.numbers.length);
    swapped.subarray(at, at + 8).reverse();
    expect(decodeNoopRecord(swapped)).toBe('was written in another byte order');
    expect(decodeNoopRecord(Buffer.from('{"key":"k"}'))).toBe('is not a no-op record');
    expect(decodeNoopRecord(Buffer.from('refinery noop 2\n{"key":\n'))).toBe('has a header that is not valid JSON');
    expect(decodeNoopRecord(Buffer.from('refinery noop 2\n{"key":'))).toBe('is cut short');
    // A path list with one separator more, or one fewer, than the header's count of files.
    const text = bytes.toString('latin1');
    for (const damaged of [text.replace('out/a', 'out\0a'), text.replace('\0out/a', 'xout/a')])
      expect(decodeNoopRecord(Buffer.from(damaged, 'latin1'))).toBe('has a path list of the wrong length');
  });
});

describe('settled stats', () => {
  it('settledStat - 20 ms after an mtime with a sub-second part, 2 s after a whole-second one, never before it', () => {
    const fine = 1_700_000_000_123.456;
    expect(settledStat(fine, fine + 19.99)).toBe(false);
    expect(settledStat(fine, fine + 20)).toBe(true);
    const whole = 1_700_000_001_000;
    expect(settledStat(whole, whole + 1999)).toBe(false);
    expect(settledStat(whole, whole + 2000)).toBe(true);
    expect(settledStat(fine, fine - 5000)).toBe(false);
  });
});
