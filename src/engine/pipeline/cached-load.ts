import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { writeFileAtomicSync } from '../state/atomic-file.ts';
import { setAsideAndWarn, type StateWarn } from '../state/set-aside.ts';
import { createHash } from 'node:crypto';
import type { PipelineSpec } from '../types/pipeline.ts';
import type { LoadResult } from './load.ts';
import type { NameResolver } from './resolve-names.ts';
import type { SourceSpan } from '../types/source.ts';
import { packSpec, unpackSpec } from './compact-spec.ts';
import { Locator } from './locate.ts';
import { parseLocatedYaml } from './yaml-source.ts';
import { readPipelineText } from './read-text.ts';

const FORMAT = 'v5';

function cacheFile(root: string, text: string): string {
  const key = createHash('sha256').update(FORMAT).update('\0').update(text).digest('hex').slice(0, 40);
  return path.join(root, '.refinery', 'cache', 'pipelines', `${key}.json`);
}

function namesStillResolve(spec: PipelineSpec, resolver: NameResolver): boolean {
  const stages = spec.stages.flatMap((s) => (s.kind === 'loop' ? s.stages : [s]));
  for (const s of stages) {
    if (s.kind === 'task' && !resolver.taskFile(s.task)) return false;
    for (const o of Object.values(s.outputs)) if (o.schema && !resolver.schemaFile(o.schema)) return false;
  }
  return true;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isPackedStage(s: unknown): boolean {
  if (!isObject(s) || typeof s.id !== 'string' || typeof s.kind !== 'string') return false;
  if (s.kind === 'loop') return Array.isArray(s.stages) && s.stages.every(isPackedStage);
  return (s.kind === 'task' || s.kind === 'run') && Array.isArray(s.inputs) && isObject(s.outputs);
}

/** The shape unpackSpec and the expansion rely on: a damaged cache file must not reach them. */
function isPackedSpec(c: unknown): c is Record<string, unknown> {
  return (
    isObject(c) &&
    typeof c.name === 'string' &&
    typeof c.file === 'string' &&
    isObject(c.params) &&
    isObject(c.vars) &&
    isObject(c.pools) &&
    Array.isArray(c.stages) &&
    c.stages.every(isPackedStage)
  );
}

/**
 * Loads a pipeline file; a file already checked with this exact text is read back from
 * `.refinery/cache/pipelines/` instead of parsed again (large pipelines parse slowly).
 */
export async function loadPipelineCached(root: string, file: string, resolver: NameResolver, warn?: StateWarn): Promise<LoadResult> {
  const absolute = path.resolve(root, file);
  const read = readPipelineText(absolute, file);
  if ('diagnostic' in read) return { diagnostics: [read.diagnostic], text: '' };
  const { text } = read;
  const cached = cacheFile(root, `${absolute}\0${text}`);
  let packed: string | undefined;
  try {
    packed = readFileSync(cached, 'utf8');
  } catch {
    /* not cached yet (or no cache folder to read): parse */
  }
  if (packed !== undefined) {
    try {
      let locator: Locator | undefined;
      const locate = (at: Array<string | number>): SourceSpan =>
        (locator ??= new Locator(absolute, text, parseLocatedYaml(absolute, text))).span(at, 'key');
      const value: unknown = JSON.parse(packed);
      if (!isPackedSpec(value)) throw new Error('not a packed pipeline');
      const spec = unpackSpec(value, locate);
      if (namesStillResolve(spec, resolver)) return { spec, diagnostics: [], text };
    } catch {
      setAsideAndWarn(
        root,
        cached,
        `(the parse cache of ${path.relative(root, absolute) || absolute}) cannot be read back`,
        warn,
        'the pipeline is parsed again',
      );
    }
  }
  const { loadPipelineText } = await import('./load.ts');
  const result = loadPipelineText(absolute, text, resolver);
  if (result.spec) {
    try {
      mkdirSync(path.dirname(cached), { recursive: true });
      writeFileAtomicSync(cached, JSON.stringify(packSpec(result.spec)));
    } catch {
      /* a cache that cannot be written only costs speed (its temporary file is gone) */
    }
  }
  return result;
}
