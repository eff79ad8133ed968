// Model answers through the remote cache, so a call made anywhere on the team is a $0 cache hit
// everywhere else. An answer is one file (`llm/response.json`, the local cache's entry) under the
// action-cache key derived from the local cache key. The LLM client asks it after a local miss
// and tells it every new answer; tasks find the store of their run by the run id.
import { isCachedEntry, type CachedEntry } from './response-cache.ts';
import { llmCacheKey, sha256Hex } from '../../engine/remote-cache/keys.ts';
import type { RemoteCache, Warn } from '../../engine/remote-cache/remote-cache.ts';

export const RESPONSE_PATH = 'llm/response.json';

/** What the LLM client needs of a second-level cache. */
export interface RemoteResponses {
  get(contentKey: string, warn?: Warn): Promise<CachedEntry | undefined>;
  /** Stores a new answer in the background (the run waits for it before it ends). */
  put(entry: CachedEntry, warn?: Warn): void;
}

/** A shared answer is taken only when whole: a non-empty text, a cost and a latency. */
function isEntry(value: unknown, key: string): value is CachedEntry {
  return isCachedEntry(value, key) && value.result.text.trim() !== '' && value.costUsd >= 0 && typeof value.latencyMs === 'number';
}

const ignore: Warn = () => {};

export function remoteResponses(remote: RemoteCache): RemoteResponses {
  return {
    async get(contentKey, warn = ignore) {
      if (!remote.active) return undefined;
      const what = 'a model answer';
      const entry = await remote.read(llmCacheKey(contentKey), 'llm');
      if (entry.kind === 'miss') return undefined;
      if (entry.kind === 'failed') {
        remote.problem(warn, `${entry.message}; the call is made here`);
        return undefined;
      }
      if (entry.kind === 'refused') {
        remote.refuse(warn, what, entry.reason);
        return undefined;
      }
      const file = entry.manifest.outputs.response;
      if (!file || file.path !== RESPONSE_PATH || Object.keys(entry.manifest.outputs).length !== 1) {
        remote.refuse(warn, what, `it is not one ${RESPONSE_PATH}`);
        return undefined;
      }
      const blob = await remote.downloadBuffer(file);
      if (blob.kind === 'miss') return undefined;
      if (blob.kind === 'failed') {
        remote.problem(warn, `${blob.message}; the call is made here`);
        return undefined;
      }
      if (blob.kind === 'mismatch') {
        remote.refuse(warn, what, blob.message);
        return undefined;
      }
      let value: unknown;
      try {
        value = JSON.parse(blob.body.toString('utf8'));
      } catch {
        value = undefined;
      }
      if (!isEntry(value, contentKey)) {
        remote.refuse(warn, what, 'it is not a cached model response for this call');
        return undefined;
      }
      remote.served('call', { duration_ms: value.latencyMs, cost_usd: value.costUsd, llm_calls: 1 });
      return value;
    },
    put(entry, warn = ignore) {
      if (!remote.writable || entry.result.text.trim() === '') return;
      const data = Buffer.from(`${JSON.stringify(entry, null, 2)}\n`);
      const file = {
        name: 'response',
        path: RESPONSE_PATH,
        sha256: sha256Hex(data),
        size: data.length,
        isExecutable: false,
        body: { data },
      };
      remote.track(
        remote.write(
          llmCacheKey(entry.key),
          { kind: 'llm', durationMs: entry.latencyMs, costUsd: entry.costUsd, llmCalls: 1 },
          [file],
          warn,
        ),
      );
    },
  };
}

// Kept on globalThis: the CLI may run from dist/ while the built-in tasks import the TypeScript
// sources, two instances of this module in one process that must share the run's store.
const REGISTRY = Symbol.for('refinery.remote-responses');
const byRun: Map<string, RemoteResponses> = ((globalThis as Record<symbol, unknown>)[REGISTRY] ??= new Map()) as Map<
  string,
  RemoteResponses
>;

/** Makes the store reachable by the tasks of a run (they run in this process). */
export function registerRemoteResponses(runId: string, store: RemoteResponses): () => void {
  byRun.set(runId, store);
  return () => byRun.delete(runId);
}

export function remoteResponsesForRun(runId: string): RemoteResponses | undefined {
  return byRun.get(runId);
}
