import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createHash } from 'node:crypto';
import type { PipelineSpec } from '../model/pipeline.ts';
import type { LoadResult } from './load.ts';
import type { NameResolver } from './resolve-names.ts';
import type { SourceSpan } from '../model/source.ts';
import { packSpec, unpackSpec } from './compact-spec.ts';
import { Locator } from './locate.ts';
import { parseLocatedYaml } from './yaml-source.ts';
import { readPipelineText } from './read-text.ts';

const FORMAT = 'v4';

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

/**
 * Loads a pipeline file; a file already checked with this exact text is read back from
 * `.refinery/cache/pipelines/` instead of parsed again (large pipelines parse slowly).
 */
export async function loadPipelineCached(root: string, file: string, resolver: NameResolver): Promise<LoadResult> {
  const absolute = path.resolve(root, file);
  const read = readPipelineText(absolute, file);
  if ('diagnostic' in read) return { diagnostics: [read.diagnostic], text: '' };
  const { text } = read;
  const cached = cacheFile(root, `${absolute}\0${text}`);
  try {
    let locator: Locator | undefined;
    const locate = (at: Array<string | number>): SourceSpan => (locator ??= new Locator(absolute, text, parseLocatedYaml(absolute, text))).span(at, 'key');
    const spec = unpackSpec(JSON.parse(readFileSync(cached, 'utf8')) as Record<string, unknown>, locate);
    if (namesStillResolve(spec, resolver)) return { spec, diagnostics: [], text };
  } catch {
    /* not cached yet */
  }
  const { loadPipelineText } = await import('./load.ts');
  const result = loadPipelineText(absolute, text, resolver);
  if (result.spec) {
    try {
      mkdirSync(path.dirname(cached), { recursive: true });
      const tmp = `${cached}.${process.pid}.tmp`;
      writeFileSync(tmp, JSON.stringify(packSpec(result.spec)));
      renameSync(tmp, cached);
    } catch {
      /* a cache that cannot be written only costs speed */
    }
  }
  return result;
}
