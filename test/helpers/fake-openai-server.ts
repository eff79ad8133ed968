// An OpenAI-compatible chat completions server on 127.0.0.1 for tests and benchmarks: real node:http,
// JSON or SSE streaming, and scripted failures (429 with Retry-After, 5xx, garbage, slow, hanging).
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { EventEmitter, once } from 'node:events';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  index: number;
  path: string;
  headers: IncomingMessage['headers'];
  body: {
    model?: string;
    messages?: Array<{ role: string; content: string }>;
    stream?: boolean;
    response_format?: unknown;
    [key: string]: unknown;
  };
  /** The user message. */
  prompt: string;
}

export type FakeReply =
  | { kind: 'content'; content: string; delayMs?: number; promptTokens?: number; completionTokens?: number }
  | { kind: 'status'; status: number; retryAfter?: string; body?: string; delayMs?: number }
  | { kind: 'garbage'; body?: string; delayMs?: number }
  | { kind: 'hang' };

export type Responder = (request: RecordedRequest) => FakeReply;

export interface FakeOpenAiServer {
  /** Base URL ending in /v1. */
  readonly url: string;
  readonly requests: RecordedRequest[];
  /** Replies used first, in order, before the responder. */
  enqueue(...replies: FakeReply[]): void;
  setResponder(responder: Responder): void;
  /** Resolves once `count` requests have arrived in total. */
  waitForRequests(count: number): Promise<void>;
  close(): Promise<void>;
}

function delay(ms: number | undefined): Promise<void> {
  return ms ? new Promise((resolve) => setTimeout(resolve, ms)) : Promise.resolve();
}

function completion(model: string, content: string, reply: Extract<FakeReply, { kind: 'content' }>, prompt: string) {
  return {
    id: 'chatcmpl-fake',
    object: 'chat.completion',
    created: 0,
    model,
    choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
    usage: usage(reply, prompt, content),
  };
}

function usage(reply: Extract<FakeReply, { kind: 'content' }>, prompt: string, content: string) {
  const prompt_tokens = reply.promptTokens ?? Math.ceil(prompt.length / 4);
  const completion_tokens = reply.completionTokens ?? Math.ceil(content.length / 4);
  return { prompt_tokens, completion_tokens, total_tokens: prompt_tokens + completion_tokens };
}

async function writeStream(res: ServerResponse, request: RecordedRequest, reply: Extract<FakeReply, { kind: 'content' }>): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const model = request.body.model ?? 'fake';
  const pieces = [reply.content.slice(0, Math.ceil(reply.content.length / 3)), reply.content.slice(Math.ceil(reply.content.length / 3))];
  const perPiece = (reply.delayMs ?? 0) / (pieces.length + 1);
  for (const piece of pieces) {
    await delay(perPiece);
    const chunk = { id: 'chatcmpl-fake', object: 'chat.completion.chunk', model, choices: [{ index: 0, delta: { content: piece }, finish_reason: null }] };
    res.write(`data: ${JSON.stringify(chunk)}\n\n`);
  }
  await delay(perPiece);
  const include = (request.body.stream_options as { include_usage?: boolean } | undefined)?.include_usage;
  const last = { id: 'chatcmpl-fake', object: 'chat.completion.chunk', model, choices: [], usage: include ? usage(reply, request.prompt, reply.content) : null };
  res.write(`data: ${JSON.stringify(last)}\n\ndata: [DONE]\n\n`);
  res.end();
}

async function answer(res: ServerResponse, request: RecordedRequest, reply: FakeReply): Promise<void> {
  if (reply.kind === 'hang') return;
  // A streamed answer is slow between its chunks; everything else is slow before the headers.
  if (reply.kind === 'content' && request.body.stream) return writeStream(res, request, reply);
  await delay(reply.delayMs);
  if (reply.kind === 'status') {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (reply.retryAfter !== undefined) headers['retry-after'] = reply.retryAfter;
    res.writeHead(reply.status, headers);
    res.end(reply.body ?? JSON.stringify({ error: { message: `fake status ${reply.status}` } }));
    return;
  }
  if (reply.kind === 'garbage') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(reply.body ?? '<html>502 Bad Gateway</html>');
    return;
  }
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify(completion(request.body.model ?? 'fake', reply.content, reply, request.prompt)));
}

/** Starts the server on 127.0.0.1 with a random port. */
export async function startFakeOpenAiServer(responder?: Responder): Promise<FakeOpenAiServer> {
  const requests: RecordedRequest[] = [];
  const queue: FakeReply[] = [];
  const events = new EventEmitter();
  let current: Responder = responder ?? (() => ({ kind: 'content', content: 'ok' }));
  const sockets = new Set<import('node:net').Socket>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let body: RecordedRequest['body'] = {};
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as RecordedRequest['body'];
      } catch {
        res.writeHead(400).end('{"error":{"message":"bad json"}}');
        return;
      }
      const prompt = body.messages?.filter((m) => m.role === 'user').map((m) => m.content).join('\n') ?? '';
      const request: RecordedRequest = { index: requests.length, path: req.url ?? '', headers: req.headers, body, prompt };
      requests.push(request);
      events.emit('request', requests.length);
      if (req.method !== 'POST' || !request.path.endsWith('/chat/completions')) {
        res.writeHead(404).end('{"error":{"message":"not found"}}');
        return;
      }
      const reply = queue.shift() ?? current(request);
      answer(res, request, reply).catch(() => res.destroy());
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    enqueue: (...replies) => queue.push(...replies),
    setResponder: (r) => {
      current = r;
    },
    waitForRequests: async (count) => {
      while (requests.length < count) await once(events, 'request');
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
