import { redactSecrets, SECRET_ENV_NAME } from '../../security/known-secrets.ts';
import { digest } from '../state/hash-file.ts';
import { stableJson } from './fingerprint.ts';

/**
 * A stage's resolved params one by one, as the journal keeps them so `refinery why` can name the
 * one that changed with its old and new value: `with.KEY`, `env.NAME`, `outputs.NAME` and
 * `command` (the command as it would be run). A value is its JSON text, except a value that
 * looks secret (by its name, as environment variables are judged, or by its content, as every
 * log line is): `hidden:` and its hash, so a change is still seen and the value never written;
 * and a long one: `long:` and its hash, so the journal stays small. Neither prefix can start
 * JSON text.
 */
export type ParamValues = Record<string, string>;

const HIDDEN = 'hidden:';
const LONG = 'long:';
/** Longer values are kept as a hash: the journal is read whole by runs that check everything. */
const MAX_SHOWN = 200;

export interface RenderedParams {
  with: unknown;
  command: { pieces: string[]; values: unknown[] } | null;
  env: Record<string, string>;
}

/** The command as a user reads it: its literal pieces with the values in their places. */
function commandText(command: { pieces: string[]; values: unknown[] }): string {
  let text = command.pieces[0] ?? '';
  command.values.forEach((value, i) => {
    text += `${Array.isArray(value) ? value.join(' ') : String(value)}${command.pieces[i + 1] ?? ''}`;
  });
  return text;
}

function keep(values: ParamValues, key: string, value: unknown): void {
  const text = stableJson(value);
  const name = key.slice(key.lastIndexOf('.') + 1);
  if (SECRET_ENV_NAME.test(name) || redactSecrets(text) !== text) values[key] = `${HIDDEN}${digest(text)}`;
  else values[key] = text.length > MAX_SHOWN ? `${LONG}${digest(text)}` : text;
}

export function paramValues(rendered: RenderedParams, outputs: Record<string, unknown>): ParamValues {
  const values: ParamValues = {};
  const withValue = rendered.with;
  if (withValue && typeof withValue === 'object' && !Array.isArray(withValue))
    for (const [k, v] of Object.entries(withValue)) keep(values, `with.${k}`, v);
  else if (withValue !== null && withValue !== undefined) keep(values, 'with', withValue);
  if (rendered.command) keep(values, 'command', commandText(rendered.command));
  for (const [k, v] of Object.entries(rendered.env)) keep(values, `env.${k}`, v);
  for (const [k, v] of Object.entries(outputs)) keep(values, `outputs.${k}`, v);
  return values;
}

/** How a kept value reads in `refinery why`: its JSON text, or why it is not shown. */
function shown(value: string): { text: string } | { hidden: string } {
  if (value.startsWith(HIDDEN)) return { hidden: 'value hidden' };
  if (value.startsWith(LONG)) return { hidden: 'value too long to show' };
  return { text: value };
}

/** What changed between two stages' kept params, one line each, in key order. */
export function paramChanges(before: ParamValues, after: ParamValues): string[] {
  const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
  const out: string[] = [];
  for (const key of keys) {
    const old = before[key];
    const now = after[key];
    if (old === now) continue;
    if (old === undefined) {
      const n = shown(now as string);
      out.push(`param ${key} is new${'text' in n ? `: ${n.text}` : ` (${n.hidden})`}`);
    } else if (now === undefined) {
      const o = shown(old);
      out.push(`param ${key} was removed${'text' in o ? ` (was ${o.text})` : ''}`);
    } else {
      const o = shown(old);
      const n = shown(now);
      out.push(
        `param ${key} changed${'text' in o && 'text' in n ? `: ${o.text} -> ${n.text}` : ` (${'hidden' in n ? n.hidden : 'hidden' in o ? o.hidden : ''})`}`,
      );
    }
  }
  return out;
}
