import { describe, expect, it } from 'vitest';
import { parseSimpleCommand } from '../../../src/engine/shell/simple-command.ts';

describe('parseSimpleCommand', () => {
  it('parseSimpleCommand - words and an output redirection', () => {
    expect(parseSimpleCommand('cksum src/a.txt src/b.txt > out/c.txt')).toEqual({
      argv: ['cksum', 'src/a.txt', 'src/b.txt'],
      redirects: [{ fd: 1, mode: 'w', path: 'out/c.txt' }],
    });
  });

  it('parseSimpleCommand - quotes are removed as sh removes them', () => {
    expect(parseSimpleCommand(`wc -l 'my file.txt' "two words" x'y'"z" ''`)?.argv).toEqual([
      'wc',
      '-l',
      'my file.txt',
      'two words',
      'xyz',
      '',
    ]);
  });

  it('parseSimpleCommand - every plain redirection form', () => {
    expect(parseSimpleCommand('tr a-z A-Z <in.txt >>log.txt 2>err.txt')?.redirects).toEqual([
      { fd: 0, mode: 'r', path: 'in.txt' },
      { fd: 1, mode: 'a', path: 'log.txt' },
      { fd: 2, mode: 'w', path: 'err.txt' },
    ]);
    expect(parseSimpleCommand('cat a>b')).toEqual({ argv: ['cat', 'a'], redirects: [{ fd: 1, mode: 'w', path: 'b' }] });
    expect(parseSimpleCommand('cat 0<a 1>b 2>>c')?.redirects.map((r) => `${r.fd}${r.mode}`)).toEqual(['0r', '1w', '2a']);
  });

  it('parseSimpleCommand - a word of digits next to an operator is a descriptor name, not handled', () => {
    expect(parseSimpleCommand('cat 12>b')).toBeUndefined();
    expect(parseSimpleCommand('cat a2>b')?.argv).toEqual(['cat', 'a2']);
  });

  const needShell = [
    'cat a | wc -l',
    'cat a && echo b',
    'cat a; cat b',
    'cat a &',
    'echo $HOME',
    'echo "$HOME"',
    'cat `ls`',
    'cat $(ls)',
    'cat *.txt',
    'cat a?.txt',
    'cat [ab].txt',
    'cat ~/a',
    'cat a\\ b',
    'cat {a,b}',
    'cat a # comment',
    'cat a 2>&1',
    'cat a >&2',
    'cat a >| b',
    'cat <<EOF',
    'cat <> a',
    'cat > a > b',
    'cat >',
    'cat a\ncat b',
    '(cat a)',
    'FOO=1 cat a',
    'echo hi',
    'test -f a',
    'printf x',
    'cd dir',
    'exec cat',
    'true',
    '[ -f a ]',
    'if',
    '',
    '   ',
    "cat 'unterminated",
    'cat "a\\"b"',
    'cat "$x"',
    'cat é.txt',
    '-rf a',
  ];
  for (const script of needShell) {
    it(`parseSimpleCommand - leaves ${JSON.stringify(script)} to the shell`, () => {
      expect(parseSimpleCommand(script)).toBeUndefined();
    });
  }
});
