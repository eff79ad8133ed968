// A small emitter for yaml.dump(data, sort_keys=False, allow_unicode=True) output of plain
// data (maps, lists of maps or scalars, str/int/bool/null), as execution_metadata.yaml uses.

export type YamlValue = null | boolean | number | string | YamlValue[] | { [key: string]: YamlValue };

const RESERVED = /^(?:true|false|yes|no|on|off|null|~|y|n)$/i;
const NUMBERISH = /^[-+]?(?:\d[\d_]*(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?$|^\d{4}-\d\d-\d\d/;

function scalar(value: null | boolean | number | string): string {
  if (value === null) return 'null';
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number') return String(value);
  // PyYAML folds a multi-line string into indented quoted lines; a JSON string is the same value
  // in valid YAML, and one line (the generator's hostile-value tests need line breaks to survive).
  if (/[\n\r]/.test(value)) return JSON.stringify(value);
  const needsQuotes =
    value === '' ||
    RESERVED.test(value) ||
    NUMBERISH.test(value) ||
    /^[\s\-?:,[\]{}#&*!|>'"%@`]/.test(value) ||
    /\s$/.test(value) ||
    value.includes(': ') ||
    value.includes(' #');
  return needsQuotes ? `'${value.replaceAll("'", "''")}'` : value;
}

function emit(value: YamlValue, indent: string, lines: string[]): void {
  if (Array.isArray(value)) {
    for (const item of value) {
      if (item !== null && typeof item === 'object' && !Array.isArray(item)) {
        const inner: string[] = [];
        emit(item, `${indent}  `, inner);
        lines.push(`${indent}- ${(inner[0] ?? '').trimStart()}`, ...inner.slice(1));
      } else {
        lines.push(`${indent}- ${scalar(item as null | boolean | number | string)}`);
      }
    }
    return;
  }
  for (const [key, item] of Object.entries(value as Record<string, YamlValue>)) {
    if (Array.isArray(item)) {
      if (item.length === 0) lines.push(`${indent}${key}: []`);
      else {
        lines.push(`${indent}${key}:`);
        emit(item, indent, lines);
      }
    } else if (item !== null && typeof item === 'object') {
      if (Object.keys(item).length === 0) lines.push(`${indent}${key}: {}`);
      else {
        lines.push(`${indent}${key}:`);
        emit(item, `${indent}  `, lines);
      }
    } else {
      lines.push(`${indent}${key}: ${scalar(item)}`);
    }
  }
}

export function pyYamlDump(value: { [key: string]: YamlValue }): string {
  const lines: string[] = [];
  emit(value, '', lines);
  return `${lines.join('\n')}\n`;
}
