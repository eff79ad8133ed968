// Mutated copies of the test/fixtures MassGen logs: every mutation must give a schema-valid analysis, never an
// exception, and a mutation of a structured file must be reported by a warning naming that file.
// Reproduce a failure with MASSGEN_FUZZ_SEED=<seed printed below>.
import {
  cpSync,
  existsSync,
  lstatSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SchemaRegistry } from '../../../src/engine/artifacts/schema-registry.ts';
import { analyzeTurnUnit } from '../../../src/workflows/massgen/analyze.ts';
import { listTurnUnits } from '../../../src/workflows/massgen/discover.ts';
import type { TurnUnit } from '../../../src/workflows/massgen/model.ts';
import { FIXTURES } from './fixture-truth.ts';
import { mulberry32 } from '../../../src/workflows/refine/seeded.ts';

const SEED = Number(process.env.MASSGEN_FUZZ_SEED ?? 20261130);
const PER_FIXTURE = 90;

const STRUCTURED = new Set([
  'status.json',
  'metrics_summary.json',
  'metrics_events.json',
  'coordination_events.json',
  'snapshot_mappings.json',
  'execution_metadata.yaml',
  'events.jsonl',
  'massgen.log',
  'vote.json',
]);
const DELETABLE = new Set([...STRUCTURED, 'coordination_table.txt', 'answer.txt', 'context.txt', 'execution_trace.md']);
const FREE_TEXT = new Set([
  'answer.txt',
  'context.txt',
  'execution_trace.md',
  'coordination_table.txt',
  'agent_b.txt',
  'agent_a.txt',
  'system_status.txt',
]);
const LINE_FILES = new Set(['events.jsonl', 'massgen.log', 'execution_metadata.yaml']);

/** Fields the analysis reads, per file ('*' = any key or index). Written here, independently of src/. */
const FIELDS: Record<string, string[]> = {
  'status.json': [
    'finish_reason',
    'is_complete',
    'meta',
    'meta.last_updated',
    'meta.start_time',
    'meta.elapsed_seconds',
    'results',
    'results.winner',
    'results.votes',
    'agents',
    'agents.*.status',
    'agents.*.answer_count',
    'agents.*.token_usage',
    'agents.*.token_usage.input_tokens',
    'agents.*.round_history',
    'agents.*.reliability',
    'coordination.phase',
    'costs.total_estimated_cost',
  ],
  'metrics_summary.json': [
    'meta.winner',
    'totals',
    'totals.estimated_cost',
    'agents',
    'agents.*.token_usage',
    'api_timing.total_calls',
    'tools.by_tool',
  ],
  'metrics_events.json': ['tool_executions'],
  'coordination_events.json': [
    'events',
    'events.*.event_type',
    'events.*.timestamp',
    'events.*.context',
    'session_metadata.agent_ids',
    'session_metadata.final_winner',
  ],
  'snapshot_mappings.json': ['*', '*.agent_id', '*.type', '*.path'],
  'vote.json': ['voted_for', 'reason', 'unix_timestamp', 'available_options'],
};

type Rand = () => number;
const pick = <T>(rand: Rand, list: T[]): T => list[Math.floor(rand() * list.length)] as T;

function walk(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const full = path.join(dir, name);
    const st = lstatSync(full);
    if (st.isDirectory()) walk(full, out);
    else if (st.isFile()) out.push(full);
  }
  return out;
}

function wrongValue(rand: Rand, original: unknown): unknown {
  const kind = (v: unknown): string => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);
  return pick(
    rand,
    [12345, 'wrong-type', true, [1, 2], { k: 1 }].filter((v) => kind(v) !== kind(original)),
  );
}

/** Replaces the value at a random field of FIELDS[base] with a value of another type; null if none exists. */
function mutateType(rand: Rand, text: string, base: string): string | null {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return null;
  }
  const field = pick(rand, FIELDS[base] ?? []).split('.');
  let parent: Record<string, unknown> | unknown[] | null = null;
  let key: string | number = '';
  let node: unknown = doc;
  for (const part of field) {
    if (node === null || typeof node !== 'object') return null;
    const keys = Array.isArray(node) ? node.map((_, i) => i) : Object.keys(node);
    if (keys.length === 0) return null;
    key = part === '*' ? pick(rand, keys as (string | number)[]) : part;
    parent = node as Record<string, unknown>;
    node = (node as Record<string | number, unknown>)[key];
    if (node === undefined) return null;
  }
  if (!parent) return null;
  (parent as Record<string | number, unknown>)[key] = wrongValue(rand, node);
  return JSON.stringify(doc, null, 2);
}

function garbage(rand: Rand): Buffer {
  const bytes = Buffer.alloc(1 + Math.floor(rand() * 4096));
  for (let i = 0; i < bytes.length; i += 1) bytes[i] = Math.floor(rand() * 256);
  bytes[Math.floor(rand() * bytes.length)] = 0;
  return bytes;
}

interface Mutation {
  kind: string;
  file: string;
  /** A warning must name the file (or its snapshot dir). */
  detectable: boolean;
  restore: () => void;
}

function mutate(rand: Rand, files: string[]): Mutation | null {
  const kind = pick(rand, ['truncate', 'truncate', 'delete', 'garbage', 'wrong-type', 'wrong-type', 'symlink', 'free-text']);
  const candidates = files.filter((f) => {
    const base = path.basename(f);
    if (kind === 'delete' || kind === 'symlink') return DELETABLE.has(base);
    if (kind === 'wrong-type') return base in FIELDS;
    if (kind === 'free-text') return FREE_TEXT.has(base);
    return STRUCTURED.has(base);
  });
  if (candidates.length === 0) return null;
  const file = pick(rand, candidates);
  const base = path.basename(file);
  const original = readFileSync(file);
  const restore = (): void => {
    if (existsSync(file) || lstatSync(file, { throwIfNoEntry: false })) unlinkSync(file);
    writeFileSync(file, original);
  };
  if (kind === 'delete') unlinkSync(file);
  else if (kind === 'symlink') {
    unlinkSync(file);
    symlinkSync('..', file);
  } else if (kind === 'garbage' || kind === 'free-text')
    writeFileSync(file, kind === 'garbage' ? garbage(rand) : original.subarray(0, Math.floor(rand() * original.length)));
  else if (kind === 'truncate') {
    const trimmed = original.toString('latin1').trimEnd().length;
    let offset = Math.floor(rand() * trimmed);
    while (LINE_FILES.has(base) && offset > 0 && original[offset - 1] === 10) offset -= 1;
    writeFileSync(file, original.subarray(0, offset));
  } else {
    const changed = mutateType(rand, original.toString('utf8'), base);
    if (changed === null) return null;
    writeFileSync(file, changed);
  }
  return { kind, file, detectable: kind !== 'free-text', restore };
}

let work = '';
const targets: { name: string; root: string }[] = [];
const registry = new SchemaRegistry(path.resolve(import.meta.dirname, '../../..'));

beforeAll(() => {
  work = mkdtempSync(path.join(tmpdir(), 'massgen-fuzz-'));
  const real = path.join(FIXTURES, 'massgen-real/.massgen/massgen_logs');
  for (const log of readdirSync(real)) {
    const root = path.join(work, 'real', log);
    cpSync(path.join(real, log), path.join(root, log), { recursive: true });
    targets.push({ name: `massgen-real/${log}`, root });
  }
  const v = path.join(FIXTURES, 'massgen-v0191');
  for (const scenario of readdirSync(v).filter((d) => !d.endsWith('.md'))) {
    const root = path.join(work, 'v0191', scenario);
    cpSync(path.join(v, scenario), root, { recursive: true });
    targets.push({ name: `massgen-v0191/${scenario}`, root });
  }
});

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('massgen fuzz', () => {
  it(`analyzeTurnUnit - ${PER_FIXTURE} mutations per fixture never throw and stay schema-valid (seed ${SEED})`, async () => {
    console.log(`massgen fuzz seed: ${SEED} (set MASSGEN_FUZZ_SEED to reproduce)`);
    const rand = mulberry32(SEED);
    let total = 0;
    const kinds: Record<string, number> = {};
    for (const target of targets) {
      const units = await listTurnUnits(target.root);
      const unit = units[0] as TurnUnit;
      expect(units).toHaveLength(1);
      const reportDir = unit.turnDir ?? unit.logDir;
      const files = walk(target.root).filter((f) => !f.includes(`${path.sep}final${path.sep}`) && !f.includes('agent_outputs'));
      for (let i = 0; i < PER_FIXTURE; ) {
        const m = mutate(rand, files);
        if (!m) continue;
        i += 1;
        total += 1;
        kinds[m.kind] = (kinds[m.kind] ?? 0) + 1;
        const label = `seed ${SEED}, ${target.name}, mutation ${i}: ${m.kind} ${path.relative(target.root, m.file)}`;
        try {
          const fresh = await listTurnUnits(target.root);
          const { analysis, report } = await analyzeTurnUnit(fresh[0] as TurnUnit);
          expect(registry.validate('turn-analysis', analysis), label).toEqual({ ok: true });
          expect(report, label).toContain('## Executive Summary');
          if (m.detectable) {
            const rel = path.relative(reportDir, m.file);
            const named = analysis.warnings.some((w) => w.file === rel || rel.startsWith(`${w.file}/`));
            expect(named, `${label}: no warning names ${rel}; warnings: ${JSON.stringify(analysis.warnings)}`).toBe(true);
          }
        } finally {
          m.restore();
        }
      }
    }
    console.log(`massgen fuzz: ${total} mutations`, kinds);
    expect(total).toBeGreaterThanOrEqual(500);
  }, 300_000);
});
