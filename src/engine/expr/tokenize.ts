export type Token =
  | { k: 'num'; v: number; at: number }
  | { k: 'str'; v: string; at: number }
  | { k: 'id'; v: string; at: number }
  | { k: 'op'; v: string; at: number }
  | { k: 'end'; at: number };

export class ExprSyntaxError extends Error {
  constructor(
    message: string,
    /** Offset in the expression text. */
    readonly offset: number,
  ) {
    super(message);
  }
}

const OPERATORS = [
  '===',
  '!==',
  '==',
  '!=',
  '<=',
  '>=',
  '&&',
  '||',
  '<',
  '>',
  '+',
  '-',
  '*',
  '/',
  '%',
  '!',
  '?',
  ':',
  '(',
  ')',
  '[',
  ']',
  ',',
  '.',
];

function readString(text: string, start: number): { value: string; end: number } {
  const quote = text[start];
  let value = '';
  let i = start + 1;
  while (i < text.length && text[i] !== quote) {
    if (text[i] === '\\' && i + 1 < text.length) {
      const next = text[i + 1] as string;
      value += next === 'n' ? '\n' : next === 't' ? '\t' : next;
      i += 2;
    } else {
      value += text[i];
      i += 1;
    }
  }
  if (i >= text.length) throw new ExprSyntaxError('unterminated string', start);
  return { value, end: i + 1 };
}

const NUMBER = /[0-9]+(\.[0-9]+)?/y;
const NAME_START = /[A-Za-z_$]/;
const NAME_PART = /[A-Za-z0-9_$-]/;

/** The end of the name starting at `start`; a trailing '-' belongs to a minus operator, not to the name. */
function nameEnd(text: string, start: number): number {
  let end = start + 1;
  let lastNonDash = end;
  while (end < text.length && NAME_PART.test(text[end] as string)) {
    end += 1;
    if (text[end - 1] !== '-') lastNonDash = end;
  }
  return lastNonDash;
}

/** Splits an expression into tokens in one pass (linear in the text: no re-slicing, no backtracking). */
export function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i] as string;
    if (/\s/.test(c)) {
      i += 1;
    } else if (c >= '0' && c <= '9') {
      NUMBER.lastIndex = i;
      const m = NUMBER.exec(text) as RegExpExecArray;
      tokens.push({ k: 'num', v: Number(m[0]), at: i });
      i += m[0].length;
    } else if (c === '"' || c === "'") {
      const { value, end } = readString(text, i);
      tokens.push({ k: 'str', v: value, at: i });
      i = end;
    } else if (NAME_START.test(c)) {
      const end = nameEnd(text, i);
      tokens.push({ k: 'id', v: text.slice(i, end), at: i });
      i = end;
    } else {
      const op = OPERATORS.find((o) => text.startsWith(o, i));
      if (!op) throw new ExprSyntaxError(`unexpected character '${c}'`, i);
      tokens.push({ k: 'op', v: op === '===' ? '==' : op === '!==' ? '!=' : op, at: i });
      i += op.length;
    }
  }
  tokens.push({ k: 'end', at: text.length });
  return tokens;
}
