// What a new user hit at the edges of the CLI (issue 32, item 14): a typo in a stage or command
// name, -v where it was not taken, a plan that said nothing of a stage bound to fail, a bundle
// dropped into the project root, and exists() answering about files outside the project.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { generateLogs } from '../../../dev/massgen-gen/generate.ts';
import { fleetScripts } from '../../../dev/massgen-gen/fleet.ts';
import { demoProject, runCli, tempProject, type TempProject } from '../../helpers/project.ts';

let project: TempProject | undefined;
let outside: string | undefined;
afterEach(() => {
  project?.cleanup();
  if (outside) rmSync(outside, { recursive: true, force: true });
  project = undefined;
  outside = undefined;
});

/** b reads a file that neither exists nor is written by any stage; c reads what a writes. */
const MISSING_INPUT_PIPELINE = `pipeline: m
stages:
  a:
    run: "echo a > \${outputs.o}"
    outputs: { o: out/a.txt }
  b:
    run: "cat out/a.txt notes/missing.txt > \${outputs.o}"
    inputs: [out/a.txt, notes/missing.txt]
    outputs: { o: out/b.txt }
  c:
    run: "cat out/a.txt > \${outputs.o}"
    inputs: [out/a.txt]
    outputs: { o: out/c.txt }
`;

/** A stage whose `when` asks exists() about PROBE (substituted per case). */
function existsPipeline(probe: string): string {
  return `pipeline: e
params:
  logs: { type: string, default: "" }
stages:
  a:
    run: "echo a > \${outputs.o}"
    when: "exists(${probe})"
    outputs: { o: out/a.txt }
`;
}

describe('the CLI at its edges', () => {
  it('run --only - an unknown stage exits 2 with a did-you-mean and the stages, and leaves no run folder behind', async () => {
    project = demoProject();
    const typo = await runCli(['run', 'demo', '--only', 'bb'], { cwd: project.root });
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain("--only bb: no stage 'bb' in pipeline 'demo'; did you mean 'b'?");
    expect(typo.stderr).toContain('The stages are: a, b');
    const far = await runCli(['run', 'demo', '--only', 'a', '--only', 'nosuch'], { cwd: project.root });
    expect(far.code).toBe(2);
    expect(far.stderr).toContain("--only nosuch: no stage 'nosuch' in pipeline 'demo'\n");
    expect(far.stdout).not.toContain('✓ a');
    expect(existsSync(project.path('.refinery/runs'))).toBe(false);
    const status = await runCli(['status'], { cwd: project.root });
    expect(status.stdout).not.toContain('incomplete');
    expect(status.stdout).toContain('No runs yet');
    // A name that is there still runs.
    const ok = await runCli(['run', 'demo', '--only', 'a'], { cwd: project.root });
    expect(ok.code).toBe(0);
    expect(readdirSync(project.path('.refinery/runs'))).toHaveLength(1);
  });

  it('unknown command - the nearest command is suggested, or else the commands are listed', async () => {
    project = tempProject();
    const near = await runCli(['statu'], { cwd: project.root });
    expect(near.code).toBe(2);
    expect(near.stderr).toContain("unknown command 'statu'; did you mean 'status'?");
    const far = await runCli(['frobnicate'], { cwd: project.root });
    expect(far.code).toBe(2);
    expect(far.stderr).toMatch(/unknown command 'frobnicate'; the commands are: init, run, plan, why, .*\bui\b/);
  });

  it('why -v, plan -v - accepted, and they add what a stage reads, writes and runs', async () => {
    project = demoProject();
    const why = await runCli(['why', 'demo', 'b', '-v'], { cwd: project.root });
    expect(why.stderr).toBe('');
    expect(why.code).toBe(0);
    expect(why.stdout).toContain('b would run:');
    expect(why.stdout).toContain('  inputs: out/a.txt');
    expect(why.stdout).toContain('  outputs: report out/b.json (schema demo-report)');
    expect(why.stdout).toContain('  runs: task copy-json');
    const plan = await runCli(['plan', 'demo', '--verbose'], { cwd: project.root });
    expect(plan.code).toBe(0);
    expect(plan.stdout).toMatch(/runs: cat src\/a\.txt > \$\{outputs\.a\}/);
  });

  it('global options after the command - -C and -V are named as options of refinery itself, to give before it', async () => {
    project = demoProject();
    const dir = await runCli(['status', '-C', project.root], { cwd: project.root });
    expect(dir.code).toBe(2);
    expect(dir.stderr).toContain(
      'refinery status: -C is an option of refinery itself: give it before the command (refinery -C DIR <command> ...)',
    );
    const version = await runCli(['plan', '--version'], { cwd: project.root });
    expect(version.code).toBe(2);
    expect(version.stderr).toContain('--version is an option of refinery itself');
    // Before the command, -C works as ever.
    const before = await runCli(['-C', project.root, 'status'], { cwd: os.tmpdir() });
    expect(before.code).toBe(0);
  });

  it('plan - a stage whose input is missing and written by no stage exits 1, naming the stage and the input', async () => {
    project = tempProject({ 'pipelines/m.yaml': MISSING_INPUT_PIPELINE });
    const plan = await runCli(['plan', 'm'], { cwd: project.root });
    expect(plan.code).toBe(1);
    expect(plan.stdout).toMatch(/^fail +b +\(input notes\/missing\.txt does not exist, and no stage writes it\)$/m);
    // c reads what a will write, and has never run: it runs (not failed for a's missing output).
    expect(plan.stdout).toMatch(/^run +c +\(it has never run/m);
    expect(plan.stderr).toContain(
      'refinery plan: a stage would fail:\n  b: input notes/missing.txt does not exist, and no stage writes it',
    );
    const json = await runCli(['plan', 'm', '--json'], { cwd: project.root });
    expect(json.code).toBe(1);
    // The run fails it just so: the plan said what would happen.
    const run = await runCli(['run', 'm'], { cwd: project.root });
    expect(run.code).toBe(1);
    expect(run.stdout).toContain('input notes/missing.txt does not exist, and no stage writes it');
    // Once the file is there, the plan has nothing to report.
    project.write('notes/missing.txt', 'here now\n');
    const fixed = await runCli(['plan', 'm'], { cwd: project.root });
    expect(fixed.code).toBe(0);
    expect(fixed.stderr).toBe('');
  });

  it('logs bundle - without --out the file goes to .refinery/bundles/ and its path is printed; --out still puts it elsewhere', async () => {
    project = tempProject();
    const [script] = fleetScripts(1);
    const [session] = generateLogs({ outDir: project.path('.massgen/massgen_logs'), seed: 3, scripts: [script!] }).logDirs as [string];
    const made = await runCli(['logs', 'bundle', session], { cwd: project.root });
    expect(made.stderr).toBe('');
    expect(made.code).toBe(0);
    const rel = `.refinery/bundles/massgen-${session}-turn_1.html`;
    expect(made.stdout).toContain(`wrote ${rel} (`);
    expect(existsSync(project.path(rel))).toBe(true);
    expect(readdirSync(project.root).filter((f) => f.endsWith('.html'))).toEqual([]);
    const out = await runCli(['logs', 'bundle', session, '--out', 'share/run.html'], { cwd: project.root });
    expect(out.code).toBe(0);
    expect(out.stdout).toContain('wrote share/run.html (');
    expect(existsSync(project.path('share/run.html'))).toBe(true);
  });

  it('exists() - a path out of the project fails the expression, saying so, whether by .., absolute or through a symlink', async () => {
    outside = mkdtempSync(path.join(os.tmpdir(), 'refinery-outside-'));
    writeFileSync(path.join(outside, 'secret.txt'), 'x\n');
    project = tempProject({ 'data/here.txt': 'in\n' });
    symlinkSync(outside, project.path('linkout'), 'dir');
    const up = path.relative(project.root, path.join(outside, 'secret.txt'));
    const cases: Array<[string, string]> = [
      [`'${up}'`, 'a path out of the project'],
      [`'${path.join(outside, 'secret.txt')}'`, 'an absolute path outside the project'],
      ["'linkout/secret.txt'", `it leads to ${path.join(outside, 'secret.txt')}, outside the project`],
      ["'linkout/none.txt'", 'outside the project'],
    ];
    for (const [probe, why] of cases) {
      project.write('pipelines/e.yaml', existsPipeline(probe));
      const plan = await runCli(['plan', 'e'], { cwd: project.root });
      expect(plan.code, probe).toBe(1);
      expect(plan.stdout, probe).toContain(`${why}; expressions look only inside the project`);
    }
    // The run refuses it just as the plan does (it used to answer about <root>/PATH for an absolute one).
    project.write('pipelines/e.yaml', existsPipeline(`'${path.join(outside, 'secret.txt')}'`));
    const run = await runCli(['run', 'e'], { cwd: project.root });
    expect(run.code).toBe(1);
    expect(run.stdout).toContain('an absolute path outside the project');
    expect(existsSync(project.path('out/a.txt'))).toBe(false);
    // Inside the project, through .. that stays in it, exists() answers.
    project.write('pipelines/e.yaml', existsPipeline("'data/../data/here.txt'"));
    expect((await runCli(['run', 'e'], { cwd: project.root })).code).toBe(0);
    expect(existsSync(project.path('out/a.txt'))).toBe(true);
  });

  it('exists() - a folder a param names may be looked in (logs outside the project), and nothing beside it', async () => {
    outside = mkdtempSync(path.join(os.tmpdir(), 'refinery-logs-'));
    mkdirSync(path.join(outside, 'logs'));
    writeFileSync(path.join(outside, 'logs', 'done.txt'), 'x\n');
    writeFileSync(path.join(outside, 'beside.txt'), 'x\n');
    project = tempProject({ 'pipelines/e.yaml': existsPipeline("params.logs + '/done.txt'") });
    const logs = path.join(outside, 'logs');
    const inside = await runCli(['run', 'e', '-p', `logs=${logs}`], { cwd: project.root });
    expect(inside.stderr).toBe('');
    expect(inside.code).toBe(0);
    expect(existsSync(project.path('out/a.txt'))).toBe(true);
    project.write('pipelines/e.yaml', existsPipeline("params.logs + '/../beside.txt'"));
    const beside = await runCli(['plan', 'e', '-p', `logs=${logs}`], { cwd: project.root });
    expect(beside.code).toBe(1);
    expect(beside.stdout).toContain('an absolute path outside the project; expressions look only inside the project');
  });
});
