import { fork } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';

export interface ServerHandle {
  url: string;
  requestCount(): Promise<number>;
  close(): Promise<void>;
}

/** Starts bench/refine/server-worker.ts in a child process and waits for its URL; `schema` mode answers within the schema it is sent. */
export async function startServerProcess(latencyMs: number, mode: 'canned' | 'schema' = 'canned'): Promise<ServerHandle> {
  const child = fork(fileURLToPath(new URL('./server-worker.ts', import.meta.url)), [], {
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, FAKE_LATENCY_MS: String(latencyMs), FAKE_MODE: mode },
  });
  const [ready] = (await once(child, 'message')) as [{ type: string; url: string }];
  return {
    url: ready.url,
    requestCount: async () => {
      child.send('count');
      const [reply] = (await once(child, 'message')) as [{ count: number }];
      return reply.count;
    },
    close: async () => {
      child.send('close');
      await once(child, 'exit');
    },
  };
}
