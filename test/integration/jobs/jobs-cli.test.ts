import { readdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { brokerCommand } from '../../../src/cli/commands/broker.ts';
import { jobsCommand } from '../../../src/cli/commands/jobs.ts';
import { MqttConnection } from '../../../src/workflows/mqtt/client.ts';
import { memoryIo, tempDir } from './support.ts';

/** Resolves with the stream's text once the pattern shows up (an event, not a sleep). */
function waitFor(stream: NodeJS.WritableStream, pattern: RegExp): Promise<RegExpMatchArray> {
  return new Promise((resolve) => {
    let buffer = '';
    const readable = stream as unknown as NodeJS.ReadableStream;
    const onData = (chunk: Buffer): void => {
      buffer += chunk.toString();
      const match = buffer.match(pattern);
      if (match) {
        readable.off('data', onData);
        resolve(match);
      }
    };
    readable.on('data', onData);
  });
}

async function jobs(dir: string, ...argv: string[]) {
  const { io, out, err } = memoryIo(dir);
  const code = await jobsCommand.run(argv, io);
  return { code, out: out(), err: err() };
}

describe('refinery jobs (CLI)', () => {
  it('jobs submit --dry-run - prints the instructions with the exact publish command and registers nothing', async () => {
    const { dir, cleanup } = tempDir();
    try {
      const result = await jobs(dir, 'submit', '--dry-run', '--prompt', 'sort the problems', '--agent', 'codex', '--agent-kind', 'command');
      expect(result.code).toBe(0);
      const id = result.out.match(/job ([0-9a-f]{8})/)?.[1] as string;
      expect(result.out).toContain(`Your job_id is "${id}"`);
      expect(result.out).toMatch(new RegExp(`bin/refinery\\.js -C \\S+ jobs publish --registry-dir \\S+ --job ${id} --event completed`));
      expect(result.out.trimEnd().split('\n').at(-1)).toBe(path.join(dir, '.mam/delegate_job_logs', id));
      expect(existsSync(path.join(dir, '.mam/jobs'))).toBe(false);
    } finally {
      cleanup();
    }
  });

  it('jobs submit - a human agent gets the instructions, reports by hand with jobs publish, and list/status/logs show the job without its token', async () => {
    const { dir, cleanup } = tempDir();
    try {
      const submitter = memoryIo(dir);
      const shown = waitFor(submitter.io.stdout, /--job ([0-9a-f]{8}) --event started/);
      const submitted = jobsCommand.run(['submit', '--agent', 'human', '--prompt', 'review the draft', '--timeout', '20'], submitter.io);
      const id = (await shown)[1] as string;
      expect(submitter.err()).toMatch(/broker: mqtt:\/\/127\.0\.0\.1:\d+ \(embedded, for this command only\)/);
      expect((await jobs(dir, 'publish', '--job', id, '--event', 'started')).out).toContain(`seq=1 event=started`);
      const published = await jobs(dir, 'publish', '--job', id, '--event', 'completed', '--detail', 'looks fine', '--data', '{"files":2}');
      expect(published.code, published.err).toBe(0);
      expect(await submitted).toBe(0);
      expect(submitter.out()).toMatch(/seq=2 completed +looks fine/);

      const list = await jobs(dir, 'list');
      expect(list.out).toMatch(new RegExp(`^${id}\\s+completed\\s+direct\\s+1/5\\s+2\\s+human`, 'm'));
      const status = await jobs(dir, 'status', '--job', id, '--json');
      const parsed = JSON.parse(status.out);
      expect(parsed.record.auth_token).toBe('[redacted]');
      expect(parsed.audit.outcome).toBe('completed');
      const logs = await jobs(dir, 'logs', id);
      expect(
        logs.out
          .trim()
          .split('\n')
          .map((l) => l.split(/\s+/).slice(1, 4).join(' ')),
      ).toEqual(['local seq=- registered', 'local seq=- iteration', 'mqtt seq=1 started', 'mqtt seq=2 completed', 'local seq=- outcome']);
      expect((await jobs(dir, 'logs', '--list')).out.trim()).toBe(path.join(dir, '.mam/delegate_job_logs', id));
      // The token lives only in the 0600 record; no log, audit file or command output carries it.
      const record = JSON.parse(readFileSync(path.join(dir, '.mam/jobs', `${id}.json`), 'utf8'));
      // A human has no tmux session: the record names the kind, not the seed's tmux default.
      expect(record.agent_session).toBe('human');
      const everything = [
        submitter.out(),
        submitter.err(),
        list.out,
        status.out,
        logs.out,
        published.out,
        ...readdirSync(path.join(dir, '.mam/delegate_job_logs', id)).map((f) =>
          readFileSync(path.join(dir, '.mam/delegate_job_logs', id, f), 'utf8'),
        ),
      ].join('\n');
      expect(everything).not.toContain(record.auth_token);
    } finally {
      cleanup();
    }
  });

  it('jobs wait - without --job follows every unfinished job and exits with the worst outcome', async () => {
    const { dir, cleanup } = tempDir();
    try {
      const submitters = ['first', 'second'].map((prompt) => {
        const m = memoryIo(dir);
        const shown = waitFor(m.io.stdout, /--job ([0-9a-f]{8}) --event started/);
        const done = jobsCommand.run(['submit', '--agent', 'human', '--prompt', prompt, '--timeout', '30'], m.io);
        return { shown, done };
      });
      const ids = await Promise.all(submitters.map(async (s) => (await s.shown)[1] as string));
      const waiter = memoryIo(dir);
      const subscribed = waitFor(waiter.io.stderr, /subscribed; waiting for 2 jobs/);
      const waited = jobsCommand.run(['wait'], waiter.io);
      await subscribed;
      const [first, second] = ids as [string, string];
      expect((await jobs(dir, 'publish', '--job', first, '--event', 'completed')).code).toBe(0);
      expect((await jobs(dir, 'publish', '--job', second, '--event', 'error', '--detail', 'could not finish')).code).toBe(0);
      expect(await waited).toBe(1);
      expect(waiter.out()).toContain(`job=${first} outcome=completed`);
      expect(waiter.out()).toContain(`job=${second} outcome=error`);
      expect(await Promise.all(submitters.map((s) => s.done))).toEqual([0, 1]);
      // Nothing is left unfinished: a second wait has nothing to follow.
      const again = await jobs(dir, 'wait');
      expect([again.code, again.err.trim()]).toEqual([0, `no pending or running jobs in ${path.join(dir, '.mam/jobs')}`]);
    } finally {
      cleanup();
    }
  });

  it('jobs verify - runs the script with JOB_ID and REGISTRY_DIR and returns its exit code', async () => {
    const { dir, cleanup } = tempDir();
    try {
      const dry = await jobs(dir, 'submit', '--agent', 'human', '--prompt', 'p', '--timeout', '0.3');
      expect(dry.code).toBe(2);
      const id = dry.out.match(/registered job: (\S+)/)?.[1] as string;
      writeFileSync(path.join(dir, 'ok.sh'), 'test -f "$REGISTRY_DIR/$JOB_ID.json"\n');
      writeFileSync(path.join(dir, 'bad.sh'), 'echo "missing sort_problems.md"; exit 4\n');
      const pass = await jobs(dir, 'verify', '--job', id, '--validate', 'ok.sh');
      expect([pass.code, pass.out.trim().split('\n').at(-1)]).toEqual([0, 'verify: PASS (exit 0)']);
      const fail = await jobs(dir, 'verify', '--job', id, '--validate', 'bad.sh');
      expect(fail.code).toBe(4);
      expect(fail.out).toContain('verify: FAIL (exit 4)');
      expect(readFileSync(path.join(dir, '.mam/delegate_job_logs', id, 'validate.log'), 'utf8')).toContain('missing sort_problems.md');
    } finally {
      cleanup();
    }
  });

  it('jobs - bad input gets a clear error and a usage exit code, never a crash', async () => {
    const { dir, cleanup } = tempDir();
    try {
      const traversal = await jobs(dir, 'status', '--job', '../../etc/passwd');
      expect([traversal.code, traversal.err]).toEqual([64, expect.stringContaining("--job '../../etc/passwd' is not valid")]);
      const unknown = await jobs(dir, 'status', '--job', 'abc12345');
      expect([unknown.code, unknown.err]).toEqual([3, expect.stringContaining("no job 'abc12345'")]);
      expect((await jobs(dir, 'publish', '--job', 'abc12345', '--event', 'done')).err).toContain("--event 'done' must be one of");
      expect((await jobs(dir, 'submit', '--prompt', 'x', '--broker', 'http://x')).err).toContain("unsupported protocol 'http:'");
      expect((await jobs(dir, 'submit', '--prompt', 'x', '--timeout', '-1')).code).toBe(64);
      expect((await jobs(dir, 'frobnicate')).code).toBe(64);
    } finally {
      cleanup();
    }
  });
});

describe('refinery broker (CLI)', () => {
  it('broker - serves MQTT on 127.0.0.1 until interrupted', async () => {
    const { dir, cleanup } = tempDir();
    try {
      const { io, out, err, abort } = memoryIo(dir);
      const listening = waitFor(io.stdout, /broker listening on (mqtt:\/\/127\.0\.0\.1:\d+)/);
      const running = brokerCommand.run([], io);
      const url = (await listening)[1] as string;
      const client = await MqttConnection.open({ url }, { clientId: 'cli-test', clean: true });
      await client.publish('t/x', 'hi', { qos: 1, retain: false });
      await client.close();
      abort();
      expect(await running).toBe(0);
      expect(out()).toContain('broker stopped');
      expect(err()).toBe('');
    } finally {
      cleanup();
    }
  });

  it('broker - --host on an address other machines reach: a warning says anyone there can read the events of jobs and publish on their topics', async () => {
    const { dir, cleanup } = tempDir();
    try {
      const { io, err, abort } = memoryIo(dir);
      const warned = waitFor(
        io.stderr,
        /warning: 0\.0\.0\.0 is reachable from other machines.*anyone who reaches port \d+ can read every job's events and publish on their topics/,
      );
      const running = brokerCommand.run(['--host', '0.0.0.0'], io);
      await warned;
      abort();
      expect(await running).toBe(0);
      expect(err()).toContain('Keep it on 127.0.0.1 (the default)');
    } finally {
      cleanup();
    }
  });
});
