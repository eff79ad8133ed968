import { readFileSync, readdirSync, writeFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedBroker, type EmbeddedBroker } from '../../../src/workflows/broker/embedded-broker.ts';
import { CommandAgent } from '../../../src/workflows/jobs/agents/command-agent.ts';
import { AuditLog } from '../../../src/workflows/jobs/audit-log.ts';
import { delegateJob, type DelegateOptions } from '../../../src/workflows/jobs/delegate.ts';
import { registryPaths } from '../../../src/workflows/jobs/paths.ts';
import { JobRegistry } from '../../../src/workflows/jobs/registry.ts';
import { InProcessAgent } from './fixtures/in-process-agent.ts';
import { publishArgv, scriptedAgentArgv, tempDir } from './support.ts';

let broker: EmbeddedBroker;
beforeAll(async () => {
  broker = await startEmbeddedBroker();
});
afterAll(async () => {
  await broker.close();
});

function scripted(script: string): CommandAgent {
  return new CommandAgent(['env', `AGENT_SCRIPT=${script}`, ...scriptedAgentArgv()]);
}

/** Completes with `detail`; a reviewer returns the verdict for its iteration. */
function quick(...details: string[]): InProcessAgent {
  return new InProcessAgent(async ({ launch, publish }) => {
    await publish('started');
    await publish('completed', details[Math.min(launch.iteration, details.length) - 1]);
  });
}

function options(root: string, overrides: Partial<DelegateOptions>): DelegateOptions {
  const paths = registryPaths(root);
  return {
    paths,
    broker: { url: broker.url },
    env: process.env,
    prompt: 'sort the problems',
    worker: { name: 'quick', session: 'none', agent: quick('done') },
    type: 'direct',
    maxIterations: 5,
    timeoutSec: 30,
    idleTimeoutSec: 20,
    expectedArtifacts: [],
    workdir: root,
    compat: false,
    publisherArgv: publishArgv(paths.registryDir),
    exitGraceMs: 500,
    ...overrides,
  };
}

/** Every file under a directory, as one string, to search for leaked secrets. */
function allText(dir: string): string {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => readFileSync(path.join(entry.parentPath, entry.name), 'utf8'))
    .join('\n');
}

describe('delegateJob (embedded aedes broker, scripted command agents)', () => {
  it('delegateJob - a command agent runs the publish commands from its instructions and the validation script passes', async () => {
    const { dir, cleanup } = tempDir();
    try {
      writeFileSync(path.join(dir, 'validate.sh'), 'test -f "$REGISTRY_DIR/$JOB_ID.json" && grep -q hello out.txt\n');
      const events: string[] = [];
      const result = await delegateJob(
        options(dir, {
          worker: { name: 'scripted', session: 'none', agent: scripted('started,write:out.txt:hello,completed:all done') },
          validate: 'validate.sh',
          expectedArtifacts: ['out.txt'],
          hooks: { event: (p) => events.push(`${p.seq}:${p.event}`) },
        }),
      );
      expect(result.outcome).toBe('completed');
      expect(result.exitCode).toBe(0);
      expect(result.via).toBe('event');
      expect(result.validation?.passed).toBe(true);
      expect(events).toEqual(['1:started', '2:completed']);
      const paths = registryPaths(dir);
      const record = await new JobRegistry(paths).get(result.jobId);
      expect(record.status).toBe('completed');
      expect(record.last_seq).toBe(2);
      expect(record.expected_artifacts).toEqual(['out.txt']);
      const { lines } = await new AuditLog(paths).timeline(result.jobId);
      expect(lines.map((l) => l.event)).toEqual(['registered', 'iteration', 'started', 'completed', 'validation', 'outcome']);
      const logDir = path.join(dir, '.mam/delegate_job_logs', result.jobId);
      expect(existsSync(path.join(logDir, 'meta.json'))).toBe(true);
      expect(JSON.parse(readFileSync(path.join(logDir, 'status.json'), 'utf8'))).toMatchObject({
        status: 'completed',
        outcome: 'completed',
        validation: 'pass',
      });
      // The token is in the record (0600) and nowhere in the audit logs.
      expect(record.auth_token).toMatch(/^[A-Za-z0-9_-]{40,}$/);
      expect(allText(logDir)).not.toContain(record.auth_token as string);
    } finally {
      cleanup();
    }
  });

  it('delegateJob - an agent that crashes before reporting ends the job as error', async () => {
    const { dir, cleanup } = tempDir();
    try {
      const result = await delegateJob(options(dir, { worker: { name: 'scripted', session: 'none', agent: scripted('started,crash:3') } }));
      expect(result.outcome).toBe('error');
      expect(result.exitCode).toBe(1);
      expect(result.reason).toContain('code 3');
      expect(result.via).toBe('event');
      const record = await new JobRegistry(registryPaths(dir)).get(result.jobId);
      expect(record.status).toBe('error');
      expect(record.last_seq).toBe(2);
    } finally {
      cleanup();
    }
  });

  it('delegateJob - a failing validation script turns a completed job into exit code 1', async () => {
    const { dir, cleanup } = tempDir();
    try {
      writeFileSync(path.join(dir, 'validate.sh'), 'test -f missing-artifact.md\n');
      const result = await delegateJob(options(dir, { validate: 'validate.sh' }));
      expect(result.outcome).toBe('completed');
      expect(result.validation).toMatchObject({ passed: false, exitCode: 1 });
      expect(result.exitCode).toBe(1);
      expect(result.reason).toContain('validation failed');
      const status = JSON.parse(readFileSync(path.join(result.logDir, 'status.json'), 'utf8'));
      expect(status.validation).toBe('fail');
    } finally {
      cleanup();
    }
  });

  it('delegateJob - a loop job whose reviewer approves on the third iteration', async () => {
    const { dir, cleanup } = tempDir();
    try {
      const phases: string[] = [];
      const result = await delegateJob(
        options(dir, {
          type: 'loop',
          maxIterations: 5,
          worker: { name: 'worker', session: 'none', agent: quick('revised') },
          reviewer: { name: 'reviewer', session: 'none', agent: quick('missing tests', 'missing docs', 'PASS looks good') },
          hooks: { phase: (p) => phases.push(`${p.role}${p.iteration}`) },
        }),
      );
      expect(phases).toEqual(['worker1', 'reviewer1', 'worker2', 'reviewer2', 'worker3', 'reviewer3']);
      expect(result.outcome).toBe('completed');
      expect(result.iterations).toBe(3);
      expect(result.feedback).toBe('PASS looks good');
      const registry = new JobRegistry(registryPaths(dir));
      const record = await registry.get(result.jobId);
      expect(record.status).toBe('completed');
      expect(record.last_seq).toBe(12);
      expect(record.prompt).toContain('Review the changes');
      const extras = await registry.getExtras(result.jobId);
      expect(extras).toMatchObject({ job_type: 'loop', iteration: 3, feedback: 'PASS looks good' });
      // The worker's second prompt carries the first review's feedback.
      const second = readFileSync(path.join(result.logDir, 'instructions.2.worker.md'), 'utf8');
      expect(second).toContain('missing tests');
    } finally {
      cleanup();
    }
  });

  it('delegateJob - a loop job without approval stops at --max-iterations as error', async () => {
    const { dir, cleanup } = tempDir();
    try {
      const result = await delegateJob(
        options(dir, {
          type: 'loop',
          maxIterations: 1,
          worker: { name: 'worker', session: 'none', agent: quick('v1') },
          reviewer: { name: 'reviewer', session: 'none', agent: quick('wrong approach') },
        }),
      );
      expect(result.outcome).toBe('error');
      expect(result.exitCode).toBe(1);
      expect(result.reason).toContain('no approval after 1');
      expect((await new JobRegistry(registryPaths(dir)).get(result.jobId)).status).toBe('error');
    } finally {
      cleanup();
    }
  });

  it('delegateJob - a silent agent hits the idle timeout (exit 2) and is stopped', async () => {
    const { dir, cleanup } = tempDir();
    try {
      const result = await delegateJob(
        options(dir, { idleTimeoutSec: 0.8, exitGraceMs: 200, worker: { name: 's', session: 'none', agent: scripted('sleep:60000') } }),
      );
      expect(result.outcome).toBe('timeout');
      expect(result.exitCode).toBe(2);
      expect(result.reason).toContain('idle timeout');
      expect((await new JobRegistry(registryPaths(dir)).get(result.jobId)).status).toBe('error');
    } finally {
      cleanup();
    }
  });
});
