import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { SchemaRegistry } from '../../../src/engine/artifacts/schema-registry.ts';
import type { StageOutcomeCode } from '../../../src/engine/types/events.ts';
import { REPO_ROOT, events, runCli, tempProject, type TempProject } from '../../helpers/project.ts';

let project: TempProject | undefined;
afterEach(() => project?.cleanup());

/** Every code, once: the compiler checks this list against the type, the test against the schema. */
const ALL_CODES: Record<StageOutcomeCode, true> = {
  ran: true,
  'from-remote-cache': true,
  'up-to-date': true,
  'when-false': true,
  'upstream-failed': true,
  'upstream-not-run': true,
  'stopped-after-failure': true,
  interrupted: true,
  'command-failed': true,
  'task-threw': true,
  'unknown-task': true,
  'task-load-failed': true,
  'invalid-params': true,
  'invalid-artifact': true,
  'publish-failed': true,
  'timed-out': true,
  'output-outside-project': true,
  'output-path-blocked': true,
  'missing-input': true,
  'unreadable-input': true,
  'expression-failed': true,
  'state-write-failed': true,
  'file-system-error': true,
  'internal-error': true,
  'no-worker': true,
  'worker-refused': true,
  'worker-result-refused': true,
};

const MANY_OUTCOMES = `pipeline: p
stages:
  ok: { run: "echo '{\\"n\\": 1}' > \${outputs.o}", outputs: { o: { path: out/ok.json, schema: n } } }
  skip: { run: "true", when: "artifacts.ok.o.n == 2", outputs: { o: out/skip } }
  crash: { run: "echo boom >&2; exit 3", outputs: { o: out/crash } }
  after: { run: "true", needs: [crash], outputs: { o: out/after } }
  after2: { run: "true", needs: [after], outputs: { o: out/after2 } }
  slow: { run: "sleep 5", timeout: 300ms, outputs: { o: out/slow } }
  bad: { run: "echo '{}' > \${outputs.o}", outputs: { o: { path: out/bad.json, schema: n } } }
  missing: { run: "true", inputs: [src/nope], outputs: { o: out/missing } }
  huge: { run: "echo \${pad('', artifacts.ok.o.n * 100000000)}", needs: [ok], outputs: { o: out/huge } }
  thrower: { task: throws, outputs: { o: out/thrown } }
`;

const THROWING_TASK = `import { defineTask, z } from 'refinery/task';
export default defineTask({ name: 'throws', params: z.object({}), async run() { throw new Error('on purpose'); } });
`;

function codesByStage(stdout: string): Record<string, [string, string]> {
  const out: Record<string, [string, string]> = {};
  for (const e of events(stdout)) if (e.type === 'stage-end') out[e.stage as string] = [e.status as string, e.code as string];
  return out;
}

describe('stage outcome codes', () => {
  it('outcome codes - the schema lists exactly the codes of StageOutcomeCode', () => {
    const schema = JSON.parse(readFileSync(`${REPO_ROOT}/schemas/run-event.schema.json`, 'utf8')) as {
      oneOf: Array<{ properties: { type: { const: string }; code?: { enum: string[] } } }>;
    };
    const stageEnd = schema.oneOf.find((b) => b.properties.type.const === 'stage-end');
    expect([...(stageEnd?.properties.code?.enum ?? [])].sort()).toEqual(Object.keys(ALL_CODES).sort());
  });

  it('outcome codes - each way a stage ends has its code, and every event still matches the schema', async () => {
    project = tempProject({
      'pipelines/p.yaml': MANY_OUTCOMES,
      'schemas/n.schema.json': JSON.stringify({ type: 'object', required: ['n'] }),
      'tasks/throws.ts': THROWING_TASK,
    });
    const result = await runCli(['run', 'p', '--json', '-k', '-j', '2'], { cwd: project.root });
    expect(result.code, result.stderr).toBe(1);
    expect(codesByStage(result.stdout)).toEqual({
      ok: ['succeeded', 'ran'],
      skip: ['skipped', 'when-false'],
      crash: ['failed', 'command-failed'],
      after: ['blocked', 'upstream-failed'],
      after2: ['blocked', 'upstream-not-run'],
      slow: ['failed', 'timed-out'],
      bad: ['failed', 'invalid-artifact'],
      missing: ['failed', 'missing-input'],
      huge: ['failed', 'expression-failed'],
      thrower: ['failed', 'task-threw'],
    });
    // A task that threw is pointed at the place in its own file.
    const thrown = events(result.stdout).find((e) => e.type === 'stage-end' && e.stage === 'thrower');
    expect(thrown?.reason).toMatch(/^task 'throws' threw: on purpose \(at tasks\/throws\.ts:2:\d+\)$/);
    const registry = new SchemaRegistry(project.root);
    for (const e of events(result.stdout)) expect(registry.validate('run-event', e), JSON.stringify(e)).toEqual({ ok: true });
    const again = await runCli(['run', 'p', '--json', '-k', '--only', 'ok'], { cwd: project.root });
    expect(codesByStage(again.stdout).ok).toEqual(['fresh', 'up-to-date']);
  });

  it('outcome codes - without --keep-going, what a failure stops is blocked with stopped-after-failure', async () => {
    project = tempProject({
      'pipelines/p.yaml': `pipeline: p
stages:
  crash: { run: "exit 3", outputs: { o: out/crash } }
  later: { run: "true", outputs: { o: out/later } }
  last: { run: "true", needs: [later], outputs: { o: out/last } }
`,
    });
    const result = await runCli(['run', 'p', '--json', '-j', '1'], { cwd: project.root });
    expect(result.code).toBe(1);
    expect(codesByStage(result.stdout)).toEqual({
      crash: ['failed', 'command-failed'],
      later: ['blocked', 'stopped-after-failure'],
      last: ['blocked', 'stopped-after-failure'],
    });
  });
});
