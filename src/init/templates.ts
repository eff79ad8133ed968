import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { PACKAGE_ROOT } from '../engine/paths/package-root.ts';

/** `refinery init` copies this folder's files into the project, placeholders filled in. */
export const INIT_TEMPLATE_DIR = path.join(PACKAGE_ROOT, 'templates', 'init');

/** Lines for the project's .gitignore; the template has no dot, as npm pack would rename a `.gitignore`. */
const GITIGNORE_TEMPLATE = 'gitignore';

export interface InitOptions {
  /** Where `just analyze` looks for logs when given none: MassGen's own folder with `--massgen`. */
  massgen: boolean;
  /** refinery's package folder relative to the project root, '/'-separated. */
  refineryDir: string;
}

export interface ScaffoldFile {
  /** Relative to the project root, '/'-separated. */
  path: string;
  content: string;
}

export interface Scaffold {
  files: ScaffoldFile[];
  gitignoreLines: string[];
}

export const MASSGEN_LOGS_DIR = '.massgen/massgen_logs';

/** Placeholder values land inside quoted YAML, just and bash strings: none of these may appear in them. */
const UNSAFE_IN_QUOTES = /["'\\$`\n\r]/;

function templateFiles(dir: string, prefix = ''): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const rel = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (entry.isDirectory()) out.push(...templateFiles(path.join(dir, entry.name), rel));
    else if (entry.isFile()) out.push(rel);
  }
  return out.sort();
}

function render(text: string, values: Readonly<Record<string, string>>, file: string): string {
  return text.replace(/@([A-Z][A-Z_]*)@/g, (_match, key: string) => {
    const value = values[key];
    if (value === undefined) throw new Error(`internal: template ${file} has an unknown placeholder @${key}@`);
    return value;
  });
}

/** Where refinery's folder cannot be written into the templates' quoted strings, the reason; else undefined. */
export function unsafeRefineryDir(refineryDir: string): string | undefined {
  return UNSAFE_IN_QUOTES.test(refineryDir)
    ? `its path (${refineryDir}) holds a quote, a backslash, a $, a backtick or a line break`
    : undefined;
}

/** The files `refinery init` writes, rendered from the templates (read from disk, nothing written). */
export function renderScaffold(options: InitOptions, templateDir = INIT_TEMPLATE_DIR): Scaffold {
  const values = { REFINERY_DIR: options.refineryDir, MASSGEN_LOGS: options.massgen ? MASSGEN_LOGS_DIR : '' };
  const files: ScaffoldFile[] = [];
  let gitignoreLines: string[] = [];
  for (const rel of templateFiles(templateDir)) {
    const text = readFileSync(path.join(templateDir, rel), 'utf8');
    if (rel === GITIGNORE_TEMPLATE)
      gitignoreLines = text
        .split('\n')
        .map((l) => l.trim())
        .filter((l) => l !== '' && !l.startsWith('#'));
    else files.push({ path: rel, content: render(text, values, rel) });
  }
  return { files, gitignoreLines };
}
