import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { forEachLine, LineSplitter } from '../../../src/workflows/massgen/read-lines.ts';

function split(chunks: string[], max = 1024, keep = 8): { lines: string[]; oversized: boolean[]; stats: ReturnType<LineSplitter['end']> } {
  const lines: string[] = [];
  const oversized: boolean[] = [];
  const s = new LineSplitter(
    (buf, start, end, _n, big) => {
      lines.push(buf.toString('utf8', start, end));
      oversized.push(big);
    },
    max,
    keep,
  );
  for (const c of chunks) s.push(Buffer.from(c));
  return { lines, oversized, stats: s.end() };
}

describe('LineSplitter', () => {
  it('LineSplitter - joins lines split across chunks and drops CR', () => {
    const { lines, stats } = split(['{"a":', '1}\r\n{"b"', ':2}\n']);
    expect(lines).toEqual(['{"a":1}', '{"b":2}']);
    expect(stats.endedWithoutNewline).toBe(false);
  });

  it('LineSplitter - a last line without newline is emitted and flagged', () => {
    const { lines, stats } = split(['one\ntw', 'o']);
    expect(lines).toEqual(['one', 'two']);
    expect(stats.endedWithoutNewline).toBe(true);
  });

  it('LineSplitter - an over-long line keeps head and tail only', () => {
    const long = `HEAD${'x'.repeat(5000)}TAIL`;
    const { lines, oversized, stats } = split([long.slice(0, 2000), long.slice(2000), '\nnext\n'], 1024, 8);
    expect(lines[0]?.startsWith('HEADxxxx')).toBe(true);
    expect(lines[0]?.endsWith('xxxxTAIL')).toBe(true);
    expect(lines[0]?.length).toBe(16);
    expect(oversized).toEqual([true, false]);
    expect(lines[1]).toBe('next');
    expect(stats.oversizedLines).toBe(1);
  });

  it('LineSplitter - an over-long line inside one chunk is capped too', () => {
    const { lines, oversized } = split([`${'y'.repeat(3000)}\nz\n`], 1024, 4);
    expect(lines).toEqual(['yyyyyyyy', 'z']);
    expect(oversized).toEqual([true, false]);
  });
});

describe('forEachLine', () => {
  it('forEachLine - reads a file with a tiny chunk size the same as a big one', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'lines-'));
    const file = path.join(dir, 'f.txt');
    const content = Array.from({ length: 500 }, (_, i) => `line ${i} ${'é'.repeat(i % 7)}`).join('\n');
    writeFileSync(file, content);
    const small: string[] = [];
    const big: string[] = [];
    await forEachLine(file, (b, s, e) => small.push(b.toString('utf8', s, e)), { chunkBytes: 7 });
    const result = await forEachLine(file, (b, s, e) => big.push(b.toString('utf8', s, e)));
    expect(small).toEqual(content.split('\n'));
    expect(big).toEqual(small);
    expect(result.ok && result.stats.endedWithoutNewline).toBe(true);
  });

  it('forEachLine - a missing file and a directory are reported, not thrown', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'lines-'));
    expect(await forEachLine(path.join(dir, 'nope'), () => {})).toEqual({ ok: false, reason: 'missing' });
    expect(await forEachLine(dir, () => {})).toEqual({ ok: false, reason: 'not a regular file (dir)' });
  });
});
