import { describe, expect, it } from 'vitest';
import { resolveParams } from '../../../src/engine/pipeline/params.ts';
import type { PipelineSpec } from '../../../src/engine/types/pipeline.ts';

function spec(params: PipelineSpec['params']): PipelineSpec {
  return { name: 'p', params } as unknown as PipelineSpec;
}

describe('params', () => {
  it('params - a string default with ${...} is worked out from the project with exists()', () => {
    const p = spec({ logs: { type: 'string', default: "${exists('.massgen/massgen_logs') ? '.massgen/massgen_logs' : 'examples/logs'}" } });
    expect(resolveParams(p, {}, { exists: (rel) => rel === '.massgen/massgen_logs' }).params.logs).toBe('.massgen/massgen_logs');
    expect(resolveParams(p, {}, { exists: () => false }).params.logs).toBe('examples/logs');
    expect(resolveParams(p, { logs: 'mine' }, { exists: () => false }).params.logs).toBe('mine');
  });

  it('params - a default that reads names is an error naming the param', () => {
    const { diagnostics } = resolveParams(spec({ a: { type: 'string', default: '${params.b}' } }), {});
    expect(diagnostics.map((d) => d.message)).toEqual(["default of param 'a' may use functions such as exists(), not names (params)"]);
  });

  it('params - every param without a default is named in one message with its description', () => {
    const p = spec({
      deliverable: { type: 'list', description: 'the files to refine' },
      judges: { type: 'list' },
      session: { type: 'string', default: 'x' },
    });
    const { diagnostics } = resolveParams(p, {});
    expect(diagnostics).toHaveLength(1);
    expect(diagnostics[0]?.message).toBe(
      "pipeline 'p' needs 2 params with no default: deliverable (list: the files to refine); judges (list). Pass --param deliverable=VALUE --param judges=VALUE",
    );
  });
});
