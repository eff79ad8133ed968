// The fake OpenAI-compatible server in its own process, so its CPU never shares the judges' event loop
// (a real API server is not in the caller's process either). Talks to the parent over IPC.
import { startFakeOpenAiServer } from '../../test/helpers/fake-openai-server.ts';
import { judgeResponder } from '../../test/integration/refine/helpers/judge-responder.ts';
import { schemaFollowingResponder } from '../../test/helpers/schema-responders.ts';

if (!process.send) throw new Error('server-worker.ts runs as a forked child with IPC');
const send = process.send.bind(process);
const delayMs = Number(process.env.FAKE_LATENCY_MS ?? 300);
// canned: answers written for refine's prompts; schema: answers derived from the schema each request carries.
const server = await startFakeOpenAiServer(
  process.env.FAKE_MODE === 'schema' ? schemaFollowingResponder({ delayMs }) : judgeResponder({ delayMs }),
);
process.on('message', (message: 'count' | 'close') => {
  if (message === 'count') send({ type: 'count', count: server.requests.length });
  if (message === 'close') void server.close().then(() => process.disconnect());
});
send({ type: 'ready', url: server.url });
