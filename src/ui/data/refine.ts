// Refine sessions (`.refinery/sessions/<session>/`): summary.json for the rounds and scores, and,
// per round, each judge's verdict, critique and next tasks, and the consensus votes.
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { readCapped } from '../../workflows/massgen/fs-safe.ts';
import { SESSION_NAME, DEFAULT_SESSIONS_DIR } from '../../workflows/refine/session-layout.ts';
import { scoredDeliverable } from './deliverable.ts';
import { isObject } from './jsonl.ts';

const JSON_CAP = 8 * 1024 * 1024;
const TEXT_CAP = 1024 * 1024;

async function readJson(file: string): Promise<unknown> {
  const read = await readCapped(file, JSON_CAP);
  if (!read.ok || read.truncated) return null;
  try {
    return JSON.parse(read.text);
  } catch {
    return null;
  }
}

async function readText(file: string): Promise<string | null> {
  const read = await readCapped(file, TEXT_CAP);
  return read.ok ? read.text : null;
}

function names(dir: string, pattern: RegExp): string[] {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isDirectory() && pattern.test(e.name))
      .map((e) => e.name)
      .sort();
  } catch {
    return [];
  }
}

const JUDGE_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;

export class RefineStore {
  private readonly dir: string;

  constructor(private readonly root: string) {
    this.dir = path.join(root, DEFAULT_SESSIONS_DIR);
  }

  async list(): Promise<Array<Record<string, unknown>>> {
    const out: Array<Record<string, unknown>> = [];
    for (const name of names(this.dir, /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/)) {
      if (!SESSION_NAME.safeParse(name).success) continue;
      const summary = await readJson(path.join(this.dir, name, 'summary.json'));
      const rounds = names(path.join(this.dir, name), /^round_\d{3,}$/).length;
      const s = isObject(summary) ? summary : null;
      const usage = s && isObject(s.usage) && isObject(s.usage.total) ? s.usage.total : null;
      out.push({
        session: name,
        rounds,
        finalVerdict: s?.final_verdict ?? null,
        stopped: s?.stopped ?? null,
        criteria: Array.isArray(s?.criteria) ? s.criteria.length : null,
        costUsd: usage?.cost_usd ?? null,
        originalCostUsd: usage?.original_cost_usd ?? null,
        hasSummary: s !== null,
      });
    }
    return out;
  }

  async session(name: string): Promise<Record<string, unknown> | undefined> {
    if (!SESSION_NAME.safeParse(name).success) return undefined;
    const dir = path.join(this.dir, name);
    const roundDirs = names(dir, /^round_\d{3,}$/);
    const criteria = await readJson(path.join(dir, 'criteria.json'));
    const summary = await readJson(path.join(dir, 'summary.json'));
    if (roundDirs.length === 0 && summary === null && criteria === null) return undefined;
    const rounds = [];
    for (const roundDir of roundDirs) {
      const base = path.join(dir, roundDir);
      const judges = [];
      for (const judge of names(path.join(base, 'judges'), JUDGE_NAME)) {
        const j = path.join(base, 'judges', judge);
        judges.push({
          name: judge,
          verdict: await readJson(path.join(j, 'verdict.json')),
          critique: await readText(path.join(j, 'critique_packet.md')),
          nextTasks: await readJson(path.join(j, 'next_tasks.json')),
          usage: await readJson(path.join(j, 'usage.json')),
        });
      }
      rounds.push({
        round: Number(roundDir.slice('round_'.length)),
        consensus: await readJson(path.join(base, 'consensus.json')),
        verdict: await readJson(path.join(base, 'verdict.json')),
        critique: await readText(path.join(base, 'critique_packet.md')),
        nextTasks: await readJson(path.join(base, 'next_tasks.json')),
        usage: await readJson(path.join(base, 'usage.json')),
        worker: await readJson(path.join(base, 'worker.json')),
        judges,
      });
    }
    return {
      session: name,
      summary,
      criteria,
      regression: await readJson(path.join(dir, 'regression.json')),
      summaryMarkdown: await readText(path.join(dir, 'SUMMARY.md')),
      deliverable: await scoredDeliverable(this.root, rounds),
      rounds,
    };
  }
}
