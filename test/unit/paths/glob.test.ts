import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { buildGraph } from '../../../src/engine/graph/graph.ts';
import { isGlob, matchGlob, staticPrefix } from '../../../src/engine/paths/glob.ts';
import { expandGlob, FolderListings } from '../../../src/engine/paths/walk.ts';

describe('glob', () => {
  it('matchGlob - * and ? stay within a segment, ** crosses any number of them', () => {
    expect(matchGlob('logs/*/turn_*', 'logs/log_1/turn_2')).toBe(true);
    expect(matchGlob('logs/*/turn_*', 'logs/a/b/turn_2')).toBe(false);
    expect(matchGlob('logs/**/status.json', 'logs/status.json')).toBe(true);
    expect(matchGlob('logs/**/status.json', 'logs/a/b/status.json')).toBe(true);
    expect(matchGlob('out/**', 'out/a/b.txt')).toBe(true);
    expect(matchGlob('file?.txt', 'file5.txt')).toBe(true);
    expect(matchGlob('file?.txt', 'file/.txt')).toBe(false);
    expect(matchGlob('a.b', 'axb')).toBe(false);
  });

  it('matchGlob - classes, negated classes and braces', () => {
    expect(matchGlob('file[0-9].txt', 'file5.txt')).toBe(true);
    expect(matchGlob('file[!0-9].txt', 'file5.txt')).toBe(false);
    expect(matchGlob('file[!0-9].txt', 'fileA.txt')).toBe(true);
    expect(matchGlob('src/*.{ts,js}', 'src/a.js')).toBe(true);
    expect(matchGlob('src/*.{ts,js}', 'src/a.md')).toBe(false);
    expect(matchGlob('{docs,src}/**/*.md', 'docs/x/y.md')).toBe(true);
  });

  it('matchGlob - a wildcard does not match a name starting with a dot unless the pattern writes the dot', () => {
    expect(matchGlob('*', '.env')).toBe(false);
    expect(matchGlob('out/*.txt', 'out/.tmp.txt')).toBe(false);
    expect(matchGlob('out/**', 'out/.cache/a.txt')).toBe(false);
    expect(matchGlob('**/*.json', '.refinery/state/x.json')).toBe(false);
    expect(matchGlob('?env', '.env')).toBe(false);
    expect(matchGlob('.*', '.env')).toBe(true);
    expect(matchGlob('src/.env*', 'src/.env.local')).toBe(true);
    expect(matchGlob('.refinery/sessions/*/round_*/*.json', '.refinery/sessions/s/round_001/a.json')).toBe(true);
  });

  it('matchGlob - parentheses, | and a leading ! are characters of file names', () => {
    expect(matchGlob('out/report (1).*', 'out/report (1).txt')).toBe(true);
    expect(matchGlob('out/*(1).txt', 'out/x(1).txt')).toBe(true);
    expect(matchGlob('a|b/*', 'a')).toBe(false);
    expect(matchGlob('a|b/*', 'a|b/c')).toBe(true);
    expect(matchGlob('!x/*', '!x/y')).toBe(true);
    expect(matchGlob('!x/*', 'z/y')).toBe(false);
    expect(matchGlob('c++/*.h', 'c++/a.h')).toBe(true);
    expect(matchGlob('$HOME/*', '$HOME/a')).toBe(true);
  });

  it('isGlob and staticPrefix - the directories before the first glob segment', () => {
    expect(isGlob('a/b.txt')).toBe(false);
    expect(isGlob('a/{b,c}.txt')).toBe(true);
    expect(staticPrefix('examples/logs/*/turn_*')).toBe('examples/logs');
    expect(staticPrefix('*.md')).toBe('');
    expect(staticPrefix('a/b.txt')).toBe('a/b.txt');
  });

  it('buildGraph - a glob input depends on the outputs it matches, not on a dot file beside them', () => {
    const node = (id: string, inputs: string[], outputs: string[]) => ({ id, needs: [], inputs, outputs });
    const g = buildGraph([node('a', [], ['out/a.txt']), node('tmp', [], ['out/.tmp.txt']), node('all', ['out/*.txt'], [])]);
    expect(g.deps.get('all')).toEqual(['a']);
  });
});

describe('expandGlob', () => {
  let root: string | undefined;
  afterEach(() => {
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it('expandGlob - walks ** past dot files and folders unless the pattern names them', () => {
    root = mkdtempSync(path.join(os.tmpdir(), 'refinery-glob-'));
    for (const rel of ['a.txt', 'sub/b.txt', '.hidden.txt', '.dir/c.txt', 'sub/.d.txt', 'report (1).txt']) {
      mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
      writeFileSync(path.join(root, rel), 'x');
    }
    expect(expandGlob(root, '**/*.txt')).toEqual(['a.txt', 'report (1).txt', 'sub/b.txt']);
    expect(expandGlob(root, '.*')).toEqual(['.hidden.txt']);
    expect(expandGlob(root, '.dir/*')).toEqual(['.dir/c.txt']);
    expect(expandGlob(root, '*', 'dir')).toEqual(['sub']);
    expect(expandGlob(root, 'report (*).txt')).toEqual(['report (1).txt']);
  });
  function tree(files: string[]): string {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'refinery-glob-'));
    for (const rel of files) {
      mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
      writeFileSync(path.join(dir, rel), 'x');
    }
    return dir;
  }

  it('expandGlob - a folder is entered only when its name can lead to a match; with braces or past a ** every folder is', () => {
    root = tree(['logs/log_1/turn_1/a.json', 'logs/log_1/turn_1/deep/a.json', 'logs/log_1/agent_a/x/a.json', 'logs/other/turn_1/a.json']);
    const listed: string[] = [];
    const hook = (dir: string): void => {
      listed.push(dir);
    };
    expect(expandGlob(root, 'logs/log_*/turn_*/a.json', 'file', hook)).toEqual(['logs/log_1/turn_1/a.json']);
    expect(listed.sort()).toEqual(['logs', 'logs/log_1', 'logs/log_1/turn_1']);
    listed.length = 0;
    expect(expandGlob(root, 'logs/log_*/**/a.json', 'file', hook)).toEqual([
      'logs/log_1/agent_a/x/a.json',
      'logs/log_1/turn_1/a.json',
      'logs/log_1/turn_1/deep/a.json',
    ]);
    expect(listed).not.toContain('logs/other');
    listed.length = 0;
    expect(expandGlob(root, 'logs/{log_1,other}/turn_1/a.json', 'file', hook)).toEqual([
      'logs/log_1/turn_1/a.json',
      'logs/other/turn_1/a.json',
    ]);
    expect(listed).toContain('logs/log_1/agent_a');
    listed.length = 0;
    const absolute = `${root}/logs/log_*/turn_*/a.json`;
    expect(expandGlob(root, absolute, 'file', hook)).toEqual([`${root}/logs/log_1/turn_1/a.json`]);
    expect(listed).not.toContain(`${root}/logs/other`);
  });

  it('expandGlob - patterns walked with one FolderListings list each folder once, and find what each finds alone', () => {
    root = tree(['logs/log_1/turn_1/analysis.json', 'logs/log_2/analysis.json', 'logs/log_2/turn_x.txt']);
    const heard: string[] = [];
    const listings = new FolderListings(root, (dir) => heard.push(dir));
    const patterns = ['logs/log_*/turn_*/analysis.json', 'logs/log_*/analysis.json'];
    const shared = patterns.map((p) => expandGlob(root as string, p, 'file', listings));
    expect(shared).toEqual(patterns.map((p) => expandGlob(root as string, p)));
    expect(shared).toEqual([['logs/log_1/turn_1/analysis.json'], ['logs/log_2/analysis.json']]);
    expect(heard.sort()).toEqual(['logs', 'logs/log_1', 'logs/log_1/turn_1', 'logs/log_2']);
  });
});
