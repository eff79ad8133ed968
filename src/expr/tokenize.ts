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

const OPERATORS = ['===', '!==', '==', '!=', '<=', '>=', '&&', '||', '<', '>', '+', '-', '*', '/', '%', '!', '?', ':', '(', ')', '[', ']', ',', '.'];

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

export function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i] as string;
    if (/\s/.test(c)) {
      i += 1;
    } else if (/[0-9]/.test(c)) {
      const m = /^[0-9]+(\.[0-9]+)?/.exec(text.slice(i)) as RegExpExecArray;
      tokens.push({ k: 'num', v: Number(m[0]), at: i });
      i += m[0].length;
    } else if (c === '"' || c === "'") {
      const { value, end } = readString(text, i);
      tokens.push({ k: 'str', v: value, at: i });
      i = end;
    } else if (/[A-Za-z_$]/.test(c)) {
      const m = /^[A-Za-z_$][A-Za-z0-9_$-]*/.exec(text.slice(i)) as RegExpExecArray;
      // A trailing '-' belongs to a minus operator, not to the name.
      const word = m[0].replace(/-+$/, '');
      tokens.push({ k: 'id', v: word, at: i });
      i += word.length;
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
