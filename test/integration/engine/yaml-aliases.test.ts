import { existsSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli, tempProject, type TempProject } from '../../helpers/project.ts';

let project: TempProject | undefined;
afterEach(() => project?.cleanup());

const MESSAGE = 'anchors/aliases are not supported in pipeline files; repeat the value';

describe('YAML anchors and aliases in pipeline files', () => {
  it('plan and run - an alias in a foreach list is a located error, and no instance runs with an empty item', async () => {
    project = tempProject({
      'pipelines/alias.yaml': [
        'pipeline: alias',
        'stages:',
        '  each:',
        '    foreach: [&v one, *v]',
        '    run: "echo [${item}] > ${outputs.o}"',
        '    outputs: { o: "out/${item}.txt" }',
        '',
      ].join('\n'),
    });
    for (const command of ['plan', 'run']) {
      const result = await runCli([command, 'alias'], { cwd: project.root });
      expect(result.code, result.stderr).toBe(2);
      expect(result.stderr).toContain(`pipelines/alias.yaml:4:23 error: YAML: alias *v: ${MESSAGE}\n`);
      expect(result.stderr).toContain('  4 |     foreach: [&v one, *v]\n    |                       ^^\n');
    }
    expect(existsSync(project.path('out'))).toBe(false);
    expect(existsSync(project.path('.refinery/runs'))).toBe(false);
  });

  it('plan - a merge key and a billion-laughs file are rejected at each alias, without expanding them', async () => {
    const laughs = ['  l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]'];
    for (let i = 1; i <= 9; i += 1) laughs.push(`  l${i}: &l${i} [${Array.from({ length: 9 }, () => `*l${i - 1}`).join(', ')}]`);
    project = tempProject({
      'pipelines/laughs.yaml': [
        'pipeline: laughs',
        'params:',
        ...laughs.map((l) => l.replace(/^ {2}(l\d+): /, '  $1: { type: list, default: ').concat(' }')),
        'stages:',
        '  base: &base { run: "true" }',
        '  other:',
        '    <<: *base',
        '',
      ].join('\n'),
    });
    const result = await runCli(['plan', 'laughs'], { cwd: project.root });
    expect(result.code, result.stderr).toBe(2);
    const errors = result.stderr.split('\n').filter((l) => l.startsWith('pipelines/laughs.yaml:'));
    expect(errors).toHaveLength(9 * 9 + 1);
    expect(errors.every((l) => l.includes(MESSAGE))).toBe(true);
    expect(errors.at(-1)).toBe(`pipelines/laughs.yaml:16:9 error: YAML: alias *base: ${MESSAGE}`);
  });
});
