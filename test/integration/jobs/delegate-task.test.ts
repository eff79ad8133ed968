import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedBroker, type EmbeddedBroker } from '../../../src/workflows/broker/embedded-broker.ts';
import { taskCommand } from '../../../src/cli/commands/task.ts';
import { memoryIo, publishArgv, scriptedAgentArgv, tempDir } from './support.ts';

let broker: EmbeddedBroker;
beforeAll(async () => {
  broker = await startEmbeddedBroker();
});
afterAll(async () => {
  await broker.close();
});

function runTask(dir: string, script: string) {
  const { io, out, err } = memoryIo(dir, { PATH: process.env.PATH });
  const params = {
    prompt: 'write the report',
    agent: 'scripted',
    agent_kind: 'command',
    command: ['env', `AGENT_SCRIPT=${script}`, ...scriptedAgentArgv()],
    broker: broker.url,
    timeout: 20,
    idle_timeout: 20,
    publish_command: publishArgv(path.join(dir, '.mam/jobs')),
  };
  const argv = [
    'delegate',
    ...Object.entries(params).flatMap(([k, v]) => ['--param', `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`]),
    '--output',
    'report=out/report.md',
  ];
  return { code: taskCommand.run(argv, io), out, err };
}

describe('the delegate task as a stage', () => {
  it('delegate task - the job record and the artifact the agent wrote are validated and published', async () => {
    const { dir, cleanup } = tempDir();
    try {
      const run = runTask(dir, 'started,write-expected:# Report,completed:report written');
      expect(await run.code, `${run.out()}\n${run.err()}`).toBe(0);
      expect(readFileSync(path.join(dir, 'out/report.md'), 'utf8')).toBe('# Report');
      const record = JSON.parse(readFileSync(path.join(dir, '.mam/delegate/record.json'), 'utf8'));
      expect(record).toMatchObject({ status: 'completed', last_seq: 2, auth_token: '[redacted]' });
      expect(record.expected_artifacts).toHaveLength(1);
      expect(record.expected_artifacts[0]).toMatch(/^\.refinery\/staging\/.+report\.md$/);
    } finally {
      cleanup();
    }
  });

  it('delegate task - a completed job whose agent did not write its artifact fails the stage and publishes nothing', async () => {
    const { dir, cleanup } = tempDir();
    try {
      const run = runTask(dir, 'started,completed:forgot the file');
      expect(await run.code).toBe(1);
      expect(run.out() + run.err()).toContain('did not write: report -> out/report.md');
      expect(existsSync(path.join(dir, 'out/report.md'))).toBe(false);
      expect(existsSync(path.join(dir, '.mam/delegate/record.json'))).toBe(false);
    } finally {
      cleanup();
    }
  });
});
