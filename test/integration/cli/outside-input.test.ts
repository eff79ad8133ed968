import { afterEach, describe, expect, it } from 'vitest';
import { parseBackendsConfig } from '../../../src/workflows/backends/config-file.ts';
import { runCli, tempProject, type TempProject } from '../../helpers/project.ts';

const HELLO = 'stages:\n  hello:\n    run: echo hi > out.txt\n    outputs: [out.txt]\n';

/** Five levels of ten aliases each: 100,000 nodes once expanded. */
const ALIAS_BOMB = [
  'a: &a [x, x, x, x, x, x, x, x, x, x]',
  'b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]',
  'c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]',
  'd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]',
  'e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]',
  'backends: {}',
  '',
].join('\n');

describe('input from outside the project code', () => {
  let project: TempProject | undefined;
  afterEach(() => {
    project?.cleanup();
    project = undefined;
  });

  it('config - an alias bomb in refinery.config.yaml is a located error with exit 2, not a ReferenceError', async () => {
    project = tempProject({ 'pipelines/p.yaml': HELLO, 'refinery.config.yaml': ALIAS_BOMB });
    const result = await runCli(['run', 'p'], { cwd: project.root });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('refinery.config.yaml:2:8: alias *a: YAML aliases here expand to more than 100 nodes');
    expect(result.stderr).not.toMatch(/ReferenceError|node_modules|at .*\.js:\d+/);
  });

  it('config - the backends section of an alias-bomb config names the file and line', () => {
    expect(() => parseBackendsConfig(ALIAS_BOMB, 'refinery.config.yaml')).toThrow(
      /^refinery\.config\.yaml:2:8: alias \*a: YAML aliases here expand/,
    );
  });
});
