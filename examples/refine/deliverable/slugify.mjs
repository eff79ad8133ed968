#!/usr/bin/env node
// slugify: turn text into a URL slug. Text comes from the arguments, or from stdin when there are none.
import { parseArgs } from 'node:util';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { separator: { type: 'string', short: 's', default: '-' }, 'max-length': { type: 'string', default: '80' } },
});

export function slugify(text, separator = '-', maxLength = 80) {
  const slug = text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, separator)
    .replace(new RegExp(`^${separator}+|${separator}+$`, 'g'), '');
  return slug.slice(0, maxLength).replace(new RegExp(`${separator}+$`), '');
}

const input = positionals.length > 0 ? positionals.join(' ') : await new Response(process.stdin).text();
process.stdout.write(`${slugify(input, values.separator, Number(values['max-length']))}\n`);
