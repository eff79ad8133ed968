// An OpenAI-compatible chat completions server on 127.0.0.1 for tests and benchmarks: real node:http,
// JSON or SSE streaming, and scripted failures (429 with Retry-After, 5xx, garbage, slow, hanging).
// It also answers Ollama's own /api/chat (non-streaming), and records the answer schema each request
// carried (`response_format` json_schema, or Ollama's `format`); see schema-responders.ts for modes that
// answer from that schema.
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
  /** Which API the request came through: OpenAI's chat completions or Ollama's /api/chat. */
  api: 'openai' | 'ollama';
  /** The JSON Schema the answer was asked to match, when the request carried one. */
  schema?: Record<string, unknown>;
  /** OpenAI's `strict` flag of that schema (undefined for Ollama). */
  strict?: boolean;
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
    const chunk = {
      id: 'chatcmpl-fake',
      object: 'chat.completion.chunk',
      model,
      choices: [{ index: 0, delta: { content: piece }, finish_reason: null }],
    };
    res.write(`data: ${JSON.stringify(chunk)}\n\n`);
  }
  await delay(perPiece);
  const include = (request.body.stream_options as { include_usage?: boolean } | undefined)?.include_usage;
  const last = {
    id: 'chatcmpl-fake',
    object: 'chat.completion.chunk',
    model,
    choices: [],
    usage: include ? usage(reply, request.prompt, reply.content) : null,
  };
  res.write(`data: ${JSON.stringify(last)}\n\ndata: [DONE]\n\n`);
  res.end();
}

/** Ollama's /api/chat answer (stream: false). */
function ollamaCompletion(model: string, reply: Extract<FakeReply, { kind: 'content' }>, prompt: string) {
  const counts = usage(reply, prompt, reply.content);
  return {
    model,
    created_at: '1970-01-01T00:00:00Z',
    message: { role: 'assistant', content: reply.content },
    done: true,
    done_reason: 'stop',
    prompt_eval_count: counts.prompt_tokens,
    eval_count: counts.completion_tokens,
  };
}

function schemaOf(body: RecordedRequest['body'], api: RecordedRequest['api']): { schema?: Record<string, unknown>; strict?: boolean } {
  const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
  if (api === 'ollama') return isObject(body.format) ? { schema: body.format } : {};
  const format = body.response_format as { type?: string; json_schema?: { schema?: unknown; strict?: unknown } } | undefined;
  if (format?.type !== 'json_schema' || !isObject(format.json_schema?.schema)) return {};
  return { schema: format.json_schema.schema, strict: format.json_schema.strict === true };
}

async function answer(res: ServerResponse, request: RecordedRequest, reply: FakeReply): Promise<void> {
  if (reply.kind === 'hang') return;
  // A streamed answer is slow between its chunks; everything else is slow before the headers.
  if (reply.kind === 'content' && request.body.stream && request.api === 'openai') return writeStream(res, request, reply);
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
  const model = request.body.model ?? 'fake';
  res.end(
    JSON.stringify(
      request.api === 'ollama' ? ollamaCompletion(model, reply, request.prompt) : completion(model, reply.content, reply, request.prompt),
    ),
  );
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
      const prompt =
        body.messages
          ?.filter((m) => m.role === 'user')
          .map((m) => m.content)
          .join('\n') ?? '';
      const api = (req.url ?? '').endsWith('/api/chat') ? 'ollama' : 'openai';
      const request: RecordedRequest = {
        index: requests.length,
        path: req.url ?? '',
        headers: req.headers,
        body,
        prompt,
        api,
        ...schemaOf(body, api),
      };
      requests.push(request);
      events.emit('request', requests.length);
      if (req.method !== 'POST' || !(request.path.endsWith('/chat/completions') || api === 'ollama')) {
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
