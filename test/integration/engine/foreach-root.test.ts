import { afterEach, describe, expect, it } from 'vitest';
import { runCli, stageEnds, tempProject, type TempProject } from '../../helpers/project.ts';

let project: TempProject | undefined;
afterEach(() => project?.cleanup());

const pipeline = (foreach: string): string => `pipeline: p
params:
  src: { type: string, default: docs }
stages:
  each:
    foreach: ${foreach}
    run: "cat \${item.path} > \${outputs.o}"
    inputs: ["\${item.path}"]
    outputs: { o: "out/\${item.stem}.txt" }
`;

describe('foreach glob root', () => {
  it('foreach glob - a missing fixed folder (a typo in a param) is an error at the stage, exit 2, naming the folder', async () => {
    project = tempProject({ 'docs/a.md': 'A', 'pipelines/p.yaml': pipeline('{ glob: "${params.src}/*.md" }') });
    const result = await runCli(['run', 'p', '--param', 'src=dcos'], { cwd: project.root });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("pipelines/p.yaml:5:3 error: stage 'each': foreach glob '${params.src}/*.md' (= 'dcos/*.md'): dcos");
    expect(result.stderr).toContain('does not exist; pass an existing path with --param src=PATH, or');
    expect(result.stderr).toContain('allow_empty: true');
    expect(result.stdout).not.toContain('nothing to do');
  });

  it('foreach glob - a file where the folder should be is an error too', async () => {
    project = tempProject({ docs: 'a file', 'pipelines/p.yaml': pipeline('{ glob: "docs/*.md" }') });
    const result = await runCli(['run', 'p'], { cwd: project.root });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/foreach glob 'docs\/\*\.md': docs \(.*\) is not a folder; fix the path, or/);
  });

  it('foreach glob - allow_empty: true turns a missing folder into an empty set', async () => {
    project = tempProject({ 'pipelines/p.yaml': pipeline('{ glob: "${params.src}/*.md", allow_empty: true }') });
    const result = await runCli(['run', 'p', '--json', '--param', 'src=nowhere'], { cwd: project.root });
    expect(result.code, result.stderr).toBe(0);
    expect(stageEnds(result.stdout)).toEqual({});
  });

  it('foreach glob - an existing folder with no match is an empty set, not an error', async () => {
    project = tempProject({ 'docs/readme.txt': 'x', 'pipelines/p.yaml': pipeline('{ glob: "docs/*.md" }') });
    const result = await runCli(['run', 'p', '--json'], { cwd: project.root });
    expect(result.code, result.stderr).toBe(0);
    expect(stageEnds(result.stdout)).toEqual({});
  });

  it('foreach glob - allow_empty must be true or false', async () => {
    project = tempProject({ 'docs/a.md': 'A', 'pipelines/p.yaml': pipeline('{ glob: "docs/*.md", allow_empty: maybe }') });
    const result = await runCli(['run', 'p'], { cwd: project.root });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      'stages.each.foreach: expected a list, an expression such as "${params.items}", or { glob, type: file|dir, allow_empty: true|false }',
    );
  });
});
