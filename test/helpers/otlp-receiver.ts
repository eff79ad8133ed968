// An OTLP/HTTP trace receiver on 127.0.0.1 for the traces tests: it decodes what it is sent,
// protobuf (test/helpers/otlp-trace.proto through protobufjs) or JSON, into one plain shape.
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  startMs: number;
  endMs: number;
  attributes: Record<string, unknown>;
  events: Array<{ name: string; timeMs: number; attributes: Record<string, unknown> }>;
  status: { code: number; message: string };
  resource: Record<string, unknown>;
}

export interface ReceivedRequest {
  contentType: string;
  headers: IncomingHttpHeaders;
  path: string;
  body: Buffer;
}

export interface OtlpReceiver {
  readonly url: string;
  readonly requests: ReceivedRequest[];
  spans(): ReceivedSpan[];
  /** Resolves with the spans received so far once `test` holds on them (checked as each request arrives). */
  until(test: (spans: ReceivedSpan[]) => boolean): Promise<ReceivedSpan[]>;
  close(): Promise<void>;
}

const root = protobuf.loadSync(path.join(path.dirname(fileURLToPath(import.meta.url)), 'otlp-trace.proto'));
const RequestType = root.lookupType('refinery.test.otlp.ExportTraceServiceRequest');

type Any = Record<string, unknown>;

function hex(value: unknown): string {
  if (value === undefined || value === null || value === '') return '';
  if (typeof value === 'string') return value.toLowerCase();
  return Buffer.from(value as Uint8Array).toString('hex');
}

function anyValue(value: Any | undefined): unknown {
  if (!value) return undefined;
  const v = (k: string) => value[k] ?? value[k.replace(/_(\w)/g, (_m, c: string) => c.toUpperCase())];
  if (v('string_value') !== undefined) return v('string_value');
  if (v('bool_value') !== undefined) return v('bool_value');
  if (v('int_value') !== undefined) return Number(v('int_value'));
  if (v('double_value') !== undefined) return Number(v('double_value'));
  const array = v('array_value') as { values?: Any[] } | undefined;
  if (array) return (array.values ?? []).map(anyValue);
  return undefined;
}

function attributes(list: Any[] | undefined): Record<string, unknown> {
  return Object.fromEntries((list ?? []).map((kv) => [kv.key as string, anyValue(kv.value as Any)]));
}

const ms = (nanos: unknown): number => Number(BigInt(String(nanos ?? 0)) / 1_000_000n);

/** Both encodings as plain objects with snake_case or camelCase keys; read with `field`. */
function field(object: Any, name: string): unknown {
  return object[name] ?? object[name.replace(/_(\w)/g, (_m, c: string) => c.toUpperCase())];
}

export function decodeRequest(request: ReceivedRequest): ReceivedSpan[] {
  const message: Any = request.contentType.includes('json')
    ? (JSON.parse(request.body.toString('utf8')) as Any)
    : (RequestType.toObject(RequestType.decode(request.body), { longs: String, bytes: Array, defaults: false }) as Any);
  const out: ReceivedSpan[] = [];
  for (const rs of (field(message, 'resource_spans') as Any[]) ?? []) {
    const resource = attributes(field((rs.resource as Any) ?? {}, 'attributes') as Any[]);
    for (const ss of (field(rs, 'scope_spans') as Any[]) ?? []) {
      for (const span of (ss.spans as Any[]) ?? []) {
        const status = (span.status as Any) ?? {};
        out.push({
          traceId: hex(field(span, 'trace_id')),
          spanId: hex(field(span, 'span_id')),
          parentSpanId: hex(field(span, 'parent_span_id')),
          name: span.name as string,
          kind: Number(span.kind ?? 0),
          startMs: ms(field(span, 'start_time_unix_nano')),
          endMs: ms(field(span, 'end_time_unix_nano')),
          attributes: attributes(span.attributes as Any[]),
          events: ((span.events as Any[]) ?? []).map((e) => ({
            name: e.name as string,
            timeMs: ms(field(e, 'time_unix_nano')),
            attributes: attributes(e.attributes as Any[]),
          })),
          status: { code: Number(status.code ?? 0), message: (status.message as string) ?? '' },
          resource,
        });
      }
    }
  }
  return out;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const requests: ReceivedRequest[] = [];
  const arrived = new Set<() => void>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      requests.push({
        contentType: req.headers['content-type'] ?? '',
        headers: req.headers,
        path: req.url ?? '',
        body: Buffer.concat(chunks),
      });
      const json = (req.headers['content-type'] ?? '').includes('json');
      res.writeHead(200, { 'content-type': json ? 'application/json' : 'application/x-protobuf' });
      res.end(json ? '{}' : undefined);
      for (const wake of arrived) wake();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const spans = () => requests.flatMap(decodeRequest);
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    spans,
    until(test) {
      return new Promise((resolve) => {
        const check = (): boolean => {
          const now = spans();
          if (test(now)) resolve(now);
          return test(now);
        };
        if (check()) return;
        const wake = (): void => {
          if (check()) arrived.delete(wake);
        };
        arrived.add(wake);
      });
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
