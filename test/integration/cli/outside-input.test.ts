import { mkdirSync, writeFileSync } from 'node:fs';
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

/** What a terminal would act on: C0 controls but newline and tab, DEL, C1. */
const RAW_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;
const TITLE_AND_ERASE = '\u001b]0;PWNED\u0007\u001b[2K';
const SHOWN = '\\u001b]0;PWNED\\u0007\\u001b[2K';

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

  it('logs list - a log folder named with ESC/OSC bytes is printed escaped, never raw', async () => {
    project = tempProject();
    mkdirSync(project.path(`logs/log_${TITLE_AND_ERASE}`), { recursive: true });
    const result = await runCli(['logs', 'list', '--logs-dir', 'logs'], { cwd: project.root });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`log_${SHOWN}`);
    expect(result.stdout + result.stderr).not.toMatch(RAW_CONTROL);
  });

  it('run - an input file name with ESC/OSC bytes reaches the console escaped, in every output mode', async () => {
    project = tempProject({
      'pipelines/p.yaml': [
        'pipeline: p',
        'stages:',
        '  list:',
        '    inputs: ["in/*.txt"]',
        '    run: "ls in; exit 1"',
        '    outputs: { o: out.txt }',
        '  missing:',
        '    inputs: ["in/b\\e]0;PWNED\\a.md"]',
        '    run: "true"',
        '    outputs: { o: out2.txt }',
        '',
      ].join('\n'),
    });
    mkdirSync(project.path('in'));
    writeFileSync(project.path(`in/a${TITLE_AND_ERASE}.txt`), 'x');
    for (const flags of [[], ['-v'], ['--json']]) {
      const result = await runCli(['run', 'p', ...flags], { cwd: project.root });
      expect(result.code, result.stderr).toBe(1);
      expect(result.stdout + result.stderr).not.toMatch(RAW_CONTROL);
      expect(result.stdout).toContain(`a${SHOWN}.txt`);
      expect(result.stdout).toContain('in/b\\u001b]0;PWNED\\u0007.md does not exist');
    }
  });

  it("run - a built-in pipeline given a missing --param path speaks of the param, not of refinery's file", async () => {
    project = tempProject();
    const missing = project.path('nope');
    const result = await runCli(['run', 'analyze', '--param', `logs=${missing}`], { cwd: project.root });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`error: --param logs=${missing}: no such folder\n`);
    expect(result.stderr.match(/no such folder/g)).toHaveLength(1);
    expect(result.stderr).not.toMatch(/node_modules|analyze\.yaml|allow_empty|\d+:\d+/);
    const byDefault = await runCli(['run', 'analyze'], { cwd: project.root });
    expect(byDefault.code).toBe(2);
    expect(byDefault.stderr).toContain(
      `error: param logs (default '.massgen/massgen_logs'): no such folder (${project.path('.massgen/massgen_logs')}); pass the folder with --param logs=PATH`,
    );
  });

  it('logs - every logs command exits 2 naming a missing path', async () => {
    project = tempProject();
    const missing = project.path('nope');
    const cases: [string[], string][] = [
      [['logs', 'list', '--logs-dir', missing], `MassGen logs folder ${missing} does not exist`],
      [['logs', 'list'], `MassGen logs folder .massgen/massgen_logs (${project.path('.massgen/massgen_logs')}) does not exist`],
      [['logs', 'summary', '--logs-dir', missing], `MassGen logs folder ${missing} does not exist`],
      [['logs', 'analyze', 'log_nope'], "no run 'log_nope': MassGen logs folder .massgen/massgen_logs"],
      [['logs', 'analyze', missing], `${missing}: no such folder`],
      [['logs', 'analyze', '--log-dir', missing], `${missing}: no such folder`],
      [['logs', 'bundle', missing], `${missing}: no such folder`],
      [['logs', 'bundle', 'log_nope', '--logs-dir', missing], `no run 'log_nope': MassGen logs folder nope (${missing}) does not exist`],
    ];
    for (const [args, message] of cases) {
      const result = await runCli(args, { cwd: project.root });
      expect({ args, code: result.code, named: result.stderr.includes(message) }, result.stderr).toEqual({ args, code: 2, named: true });
    }
  });
});
