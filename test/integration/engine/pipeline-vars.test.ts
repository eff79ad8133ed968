import { readFileSync, writeFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli, stageEnds, tempProject, type TempProject } from '../../helpers/project.ts';

let project: TempProject | undefined;
afterEach(() => project?.cleanup());

const PIPELINE = `pipeline: p
params:
  name: { type: string, default: notes }
vars:
  # Declared in any order: a var is computed after the vars it reads.
  out_dir: "out/\${vars.stem}"
  stem: "\${params.name}-copy"
  src: "in/\${params.name}.txt"
  langs: [en, fr, "\${params.name}"]
  skip: fr
stages:
  copy:
    run: "cat \${vars.src} > \${outputs.o}"
    inputs: ["\${vars.src}"]
    outputs: { o: "\${vars.out_dir}/result.txt" }
  each:
    foreach: "\${vars.langs}"
    when: "item != vars.skip"
    run: "echo \${item} \${vars.stem} > \${outputs.o}"
    outputs: { o: "out/\${item}.txt" }
`;

describe('pipeline vars', () => {
  it('pipeline vars - a var used in inputs, outputs, foreach, when and a run: command is computed from the params', async () => {
    project = tempProject({ 'in/notes.txt': 'first\n', 'in/other.txt': 'second\n', 'pipelines/p.yaml': PIPELINE });
    const first = await runCli(['run', 'p', '--json'], { cwd: project.root });
    expect(first.code, first.stderr).toBe(0);
    expect(readFileSync(project.path('out/notes-copy/result.txt'), 'utf8')).toBe('first\n');
    expect(readFileSync(project.path('out/notes.txt'), 'utf8')).toBe('notes notes-copy\n');
    expect(readFileSync(project.path('out/en.txt'), 'utf8')).toBe('en notes-copy\n');
    expect(stageEnds(first.stdout)).toEqual({ copy: 'succeeded', 'each[en]': 'succeeded', 'each[notes]': 'succeeded' });

    // The input named through a var is tracked: editing it reruns the stage that reads it, only that one.
    writeFileSync(project.path('in/notes.txt'), 'edited\n');
    const edited = await runCli(['run', 'p', '--json'], { cwd: project.root });
    expect(edited.code, edited.stderr).toBe(0);
    expect(stageEnds(edited.stdout)).toEqual({ copy: 'succeeded', 'each[en]': 'fresh', 'each[notes]': 'fresh' });
    expect(readFileSync(project.path('out/notes-copy/result.txt'), 'utf8')).toBe('edited\n');

    const other = await runCli(['run', 'p', '--json', '--param', 'name=other'], { cwd: project.root });
    expect(other.code, other.stderr).toBe(0);
    expect(readFileSync(project.path('out/other-copy/result.txt'), 'utf8')).toBe('second\n');
    expect(readFileSync(project.path('out/other.txt'), 'utf8')).toBe('other other-copy\n');
  });

  it('pipeline vars - an unknown var is located and underlined, with the var it likely means', async () => {
    project = tempProject({
      'pipelines/p.yaml': PIPELINE.replace('inputs: ["${vars.src}"]', 'inputs: ["${vars.scr}"]'),
    });
    const result = await runCli(['plan', 'p'], { cwd: project.root });
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain("pipelines/p.yaml:14:17 error: unknown var 'scr'; did you mean 'src'?\n");
    expect(result.stderr).toContain('  14 |     inputs: ["${vars.scr}"]\n     |                 ^^^^^^^^\n');
  });

  it('pipeline vars - a var a stage alone has (item) and a cycle between vars are reported together, each located', async () => {
    const vars = ['vars:', '  a: "${vars.b}/x"', '  b: "${vars.c}"', '  c: "${vars.a}"', '  d: "${item}"', ''].join('\n');
    project = tempProject({ 'pipelines/p.yaml': PIPELINE.replace(/vars:\n(?: {2}.*\n)+/, vars) });
    const result = await runCli(['plan', 'p'], { cwd: project.root });
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain('pipelines/p.yaml:5:3 error: vars cycle: a -> b -> c -> a\n');
    expect(result.stderr).toContain('  5 |   a: "${vars.b}/x"\n    |   ^\n');
    expect(result.stderr).toContain("pipelines/p.yaml:8:6 error: unknown name 'item' in expression");
    expect(result.stderr).toContain('a var is computed once per run, before any stage runs');
    // The stages' own unknown vars are reported in the same pass.
    expect(result.stderr).toContain("pipelines/p.yaml:12:17 error: unknown var 'src'");
  });
});
