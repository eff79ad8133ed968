// Stage journal records and a temporary project root for the state tests.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach } from 'vitest';
import type { StateWarn } from '../../src/engine/state/set-aside.ts';
import type { StageRecord } from '../../src/engine/state/stage-state.ts';

/** A record of the shape the journal checks; `runId` pads it when a test needs large lines. */
export function stageRecord(stage: string, fingerprint = `fp-${stage}`, runId = 'run'): StageRecord {
  return {
    stage,
    fingerprint,
    parts: { code: 'c', params: 'p', inputs: { [`src/${stage}`]: 'h' }, deps: {}, schemas: {} },
    outputs: { o: [1, 2, 3, 'hash'] },
    runId,
    finishedAt: '2026-01-01T00:00:00.000Z',
    durationMs: 1,
  };
}

export interface TempRoot {
  /** The folder of the test running now. */
  readonly root: string;
  /** What the state code warned of in this test. */
  readonly warnings: string[];
  warn: StateWarn;
}

/** A temporary folder made before each test of the file and removed after it, with the warnings given in it. */
export function tempRootEachTest(prefix: string): TempRoot {
  const current = { root: '', warnings: [] as string[] };
  beforeEach(() => {
    current.root = mkdtempSync(path.join(os.tmpdir(), prefix));
    current.warnings = [];
  });
  afterEach(() => rmSync(current.root, { recursive: true, force: true }));
  return {
    get root() {
      return current.root;
    },
    get warnings() {
      return current.warnings;
    },
    warn: (message) => {
      current.warnings.push(message);
    },
  };
}
