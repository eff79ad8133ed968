/**
 * Recognises the commands that need no shell: one program with literal words and plain
 * redirections, such as `cksum a b > out/c.txt`. Such a command can be started directly, as
 * make does for commands without shell syntax, which saves starting /bin/sh for every stage.
 * Anything this does not fully understand (expansions, globs, pipes, lists, builtins, escapes)
 * gives undefined, and the command goes to /bin/sh unchanged.
 */
export interface Redirect {
  fd: 0 | 1 | 2;
  /** r: `<`, w: `>`, a: `>>`. */
  mode: 'r' | 'w' | 'a';
  path: string;
}

export interface SimpleCommand {
  argv: string[];
  redirects: Redirect[];
}

// Builtins and reserved words of POSIX sh (and dash): these must run inside the shell, even
// where a program of the same name exists (`echo` and `test` differ from /bin/echo and /bin/test).
const SHELL_WORDS = new Set(
  `. : [ [[ ! { } alias bg break case cd command continue do done echo elif else esac eval exec exit export false fc fg fi for
  function getopts hash if in jobs kill local printf pwd read readonly return select set shift source test then time times
  trap true type typeset ulimit umask unalias unset until wait while`.split(/\s+/),
);

function isLiteral(code: number): boolean {
  // A-Z a-z 0-9 _ / . , : @ % + = -
  return (
    (code >= 0x41 && code <= 0x5a) ||
    (code >= 0x61 && code <= 0x7a) ||
    (code >= 0x30 && code <= 0x39) ||
    code === 0x5f ||
    code === 0x2f ||
    code === 0x2e ||
    code === 0x2c ||
    code === 0x3a ||
    code === 0x40 ||
    code === 0x25 ||
    code === 0x2b ||
    code === 0x3d ||
    code === 0x2d
  );
}

interface Token {
  text: string;
  /** A redirection operator rather than a word. */
  redirect?: Redirect['mode'];
  fd?: Redirect['fd'];
}

/** Reads one word or operator at `i`; undefined for anything outside the subset. */
function readToken(s: string, start: number): { token: Token; end: number } | undefined {
  let i = start;
  const digit = s.charCodeAt(i);
  if ((digit >= 0x30 && digit <= 0x32 && (s[i + 1] === '>' || s[i + 1] === '<')) || s[i] === '>' || s[i] === '<') {
    const explicit = s[i] !== '>' && s[i] !== '<';
    if (explicit) i += 1;
    const op =
      s[i] === '<'
        ? s[i + 1] === '<' || s[i + 1] === '>' || s[i + 1] === '&'
          ? undefined
          : 'r'
        : s[i + 1] === '>'
          ? 'a'
          : s[i + 1] === '&' || s[i + 1] === '|'
            ? undefined
            : 'w';
    if (op === undefined) return undefined;
    const fd = (explicit ? digit - 0x30 : op === 'r' ? 0 : 1) as Redirect['fd'];
    if ((op === 'r') !== (fd === 0)) return undefined;
    return { token: { text: '', redirect: op, fd }, end: i + (op === 'a' ? 2 : 1) };
  }
  let text = '';
  while (i < s.length) {
    const c = s.charCodeAt(i);
    if (c === 0x20 || c === 0x09) break;
    if (isLiteral(c)) {
      text += s[i];
      i += 1;
    } else if (c === 0x27) {
      const close = s.indexOf("'", i + 1);
      if (close < 0) return undefined;
      text += s.slice(i + 1, close);
      i = close + 1;
    } else if (c === 0x22) {
      const close = s.indexOf('"', i + 1);
      if (close < 0) return undefined;
      const inner = s.slice(i + 1, close);
      if (/[$`\\]/.test(inner)) return undefined;
      text += inner;
      i = close + 1;
    } else if (c === 0x3e || c === 0x3c) {
      // `a>b` is the word a, then a redirection; but `12>b` names a descriptor, which is not handled here.
      if (/^[0-9]+$/.test(text) && i - start === text.length) return undefined;
      break;
    } else {
      return undefined;
    }
  }
  if (i === start) return undefined;
  return { token: { text }, end: i };
}

export function parseSimpleCommand(script: string): SimpleCommand | undefined {
  if (script.length > 8192 || /[\n\r\0]/.test(script)) return undefined;
  const argv: string[] = [];
  const redirects: Redirect[] = [];
  let pendingRedirect: Omit<Redirect, 'path'> | undefined;
  let i = 0;
  while (i < script.length) {
    const c = script.charCodeAt(i);
    if (c === 0x20 || c === 0x09) {
      i += 1;
      continue;
    }
    const read = readToken(script, i);
    if (!read) return undefined;
    i = read.end;
    const { token } = read;
    if (token.redirect) {
      if (pendingRedirect) return undefined;
      pendingRedirect = { fd: token.fd as Redirect['fd'], mode: token.redirect };
    } else if (pendingRedirect) {
      if (token.text === '') return undefined;
      if (redirects.some((r) => r.fd === pendingRedirect?.fd)) return undefined;
      redirects.push({ ...pendingRedirect, path: token.text });
      pendingRedirect = undefined;
    } else {
      argv.push(token.text);
    }
  }
  if (pendingRedirect || argv.length === 0) return undefined;
  const name = argv[0] as string;
  // `NAME=value cmd` assigns a variable; a word starting with `-` or empty is no program name.
  if (name === '' || name.includes('=') || name.startsWith('-') || SHELL_WORDS.has(name)) return undefined;
  return { argv, redirects };
}
