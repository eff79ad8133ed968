// Agent snapshot dirs (spec §1.1, §2.6-2.8): agents are found by their timestamped children, not by name.
import { createHash } from 'node:crypto';
import path from 'node:path';
import { listDir, readCapped, SNAPSHOT_DIR, type Entry } from './fs-safe.ts';
import { parseJsonText } from './json-file.ts';
import type { ExecutionTrace, Snapshot, WarningSink } from './model.ts';
import { parseTrace } from './parse-trace.ts';
import { parseVote } from './parse-vote.ts';
import { preview } from './coerce.ts';
import { checkShape } from './shape-check.ts';
import { readLogText } from './log-text.ts';

const NOT_AGENT_DIRS = new Set([
  'final',
  'agent_outputs',
  'subagents',
  'streaming_buffers',
  'compression_debug',
  'memory_debug',
  'shadow_agents',
  'planning_injection',
]);
const ANSWER_CAP = 4 * 1024 * 1024;
const TRACE_CAP = 16 * 1024 * 1024;

export interface SnapshotScan {
  agentDirs: string[];
  snapshots: Snapshot[];
}

/** `rel(p)` maps an absolute path to the path shown in warnings. */
export async function readSnapshots(runEntries: Entry[], rel: (p: string) => string, warn: WarningSink): Promise<SnapshotScan> {
  const agentDirs: string[] = [];
  const snapshots: Snapshot[] = [];
  for (const entry of runEntries) {
    if (entry.kind !== 'dir' || NOT_AGENT_DIRS.has(entry.name) || /^(turn|attempt)_\d+$/.test(entry.name)) continue;
    const children = (await listDir(entry.path)).filter((c) => c.kind === 'dir' && SNAPSHOT_DIR.test(c.name));
    if (children.length === 0) continue;
    agentDirs.push(entry.name);
    for (const child of children) snapshots.push(await readSnapshot(entry.name, child, rel, warn));
  }
  snapshots.sort((a, b) => (a.timestamp === b.timestamp ? a.agentId.localeCompare(b.agentId) : a.timestamp < b.timestamp ? -1 : 1));
  return { agentDirs, snapshots };
}

async function readSnapshot(agentId: string, dir: Entry, rel: (p: string) => string, warn: WarningSink): Promise<Snapshot> {
  const files = new Map((await listDir(dir.path)).map((e) => [e.name, e]));
  const snapshot: Snapshot = {
    agentId,
    timestamp: dir.name,
    relDir: rel(dir.path),
    kind: 'other',
    answer: null,
    vote: null,
    contextChars: files.get('context.txt')?.kind === 'file' ? (files.get('context.txt')?.bytes ?? null) : null,
    trace: null,
  };
  const answerFile = path.join(dir.path, 'answer.txt');
  if (files.get('answer.txt')?.kind === 'file') {
    const read = await readLogText(answerFile, ANSWER_CAP);
    if (read.ok) {
      snapshot.kind = 'answer';
      snapshot.answer = { chars: read.text.length, preview: preview(read.text), hash: answerIdentity(read.text) };
      if (read.truncated) warn(rel(answerFile), 'too-large', `answer over ${ANSWER_CAP} bytes; hashed from its head only`);
    } else warn(rel(answerFile), 'unreadable', `cannot read: ${read.reason}`);
  }
  const voteFile = path.join(dir.path, 'vote.json');
  if (files.get('vote.json')?.kind === 'file') {
    const read = await readCapped(voteFile, ANSWER_CAP);
    const value = read.ok ? parseJsonText(read.text, rel(voteFile), warn) : undefined;
    if (!read.ok) warn(rel(voteFile), 'unreadable', `cannot read: ${read.reason}`);
    checkShape(value, 'vote.json', rel(voteFile), warn);
    snapshot.vote = value === undefined ? null : parseVote(value, rel(voteFile), warn, agentId);
    if (snapshot.kind === 'other') snapshot.kind = 'vote';
  }
  if (snapshot.kind === 'other')
    warn(snapshot.relDir, 'missing', 'snapshot dir has neither answer.txt nor vote.json (cut off or cleaned up?)');
  if (snapshot.contextChars === null) warn(snapshot.relDir, 'missing', 'snapshot dir has no context.txt');
  if (files.get('execution_trace.md')?.kind === 'file')
    snapshot.trace = await readTrace(path.join(dir.path, 'execution_trace.md'), rel, warn);
  return snapshot;
}

export async function readTrace(file: string, rel: (p: string) => string, warn: WarningSink): Promise<ExecutionTrace | null> {
  const read = await readLogText(file, TRACE_CAP);
  if (!read.ok) {
    warn(rel(file), 'unreadable', `cannot read: ${read.reason}`);
    return null;
  }
  if (read.truncated) warn(rel(file), 'too-large', `trace over ${TRACE_CAP} bytes; only its head was parsed`);
  return parseTrace(read.text);
}

/** Identity of an answer's text, ignoring whitespace differences. */
export function answerIdentity(text: string): string {
  return createHash('sha256').update(text.replace(/\s+/g, ' ').trim()).digest('hex').slice(0, 16);
}
