import type { SourceSpan } from '../types/source.ts';

/**
 * Gives a stage or loop spec a `span` that is worked out when first read: only a diagnostic
 * reads it, and locating every stage of a large pipeline costs more than parsing it. Not
 * enumerable, so copies and the parse cache leave it out.
 */
export function setLazySpan<T extends { span?: SourceSpan }>(target: T, locate: () => SourceSpan | undefined): T {
  let known: { span: SourceSpan | undefined } | undefined;
  Object.defineProperty(target, 'span', {
    get: () => (known ??= { span: locate() }).span,
    enumerable: false,
    configurable: true,
  });
  return target;
}
