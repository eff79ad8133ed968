// The redactor on a run journal: --lines events (default 200,000) as a run writes them, each
// cleaned by the event bus's step (redactSecretsDeep), then the same journal as text lines (what
// /files/ and a bundle redact). Most lines are clean; one in 1,000 carries a key (raw, URL-encoded
// or base64 of a line). Prints the time per pass, lines per second, and checks that every planted
// key is gone. Target: the events pass (what every run pays, event by event) under 2 s for 200k
// lines; the text passes (a bundle, the dashboard's /files/ a megabyte at a time) are reported.
//   npx tsx bench/security/run.ts [--lines 200000] [--reps 3]
import { parseArgs } from 'node:util';
import { redactSecrets, redactSecretsDeep, rememberSecret } from '../../src/security/known-secrets.ts';

const TARGET_MS = 2000;
const { values } = parseArgs({ options: { lines: { type: 'string', default: '200000' }, reps: { type: 'string', default: '3' } } });
const LINES = Number(values.lines);
const REPS = Number(values.reps);

const SK = 'sk-proj-Bench1Key2Value3Here4Long5Enough';
const PEM_LINE = 'MC4CAQAwBQYDK2VwBCIEIHq8x3Lr1Vd9nT0cW5eK2yP7mJ4sA6fB1uG8hN3oZ2Qi';
rememberSecret(`-----BEGIN PRIVATE KEY-----\n${PEM_LINE}\n-----END PRIVATE KEY-----\n`);

function event(i: number): Record<string, unknown> {
  const stage = `turn[log_20260101_${String(i % 997).padStart(6, '0')}/turn_1]`;
  const base = { runId: '20260101T000000000Z-abc123', pipeline: 'analyze', time: '2026-01-01T00:00:00.000Z', stage };
  if (i % 1000 === 7) return { ...base, type: 'stage-log', message: `using ${SK}` };
  if (i % 1000 === 507) return { ...base, type: 'stage-log', message: `key line ${PEM_LINE}` };
  if (i % 1000 === 907) return { ...base, type: 'stage-log', message: `b64 ${Buffer.from(`OPENAI_API_KEY=${SK}`).toString('base64')}` };
  if (i % 3 === 0)
    return {
      ...base,
      type: 'stage-end',
      status: 'succeeded',
      durationMs: i % 5000,
      outputs: [`.massgen/massgen_logs/x/turn_1/analysis.json`],
    };
  if (i % 3 === 1) return { ...base, type: 'stage-start', attempt: 1 };
  return { ...base, type: 'stage-log', message: `read ${i % 40} files, 3 warnings; cache key 3f2a9bc0d1e2f3a4b5c6d7e8f9a0b1c2 (fresh)` };
}

const events = Array.from({ length: LINES }, (_, i) => event(i));
const lines = events.map((e) => JSON.stringify(e));

function time(label: string, pass: () => string, target?: number): void {
  const ms: number[] = [];
  let out = '';
  for (let r = 0; r < REPS; r++) {
    const start = performance.now();
    out = pass();
    ms.push(performance.now() - start);
  }
  ms.sort((a, b) => a - b);
  const median = ms[Math.floor(ms.length / 2)] as number;
  const leaked = [SK, PEM_LINE].filter((s) => out.includes(s)).length;
  console.log(
    `${label}: median ${median.toFixed(0)} ms (min ${ms[0]?.toFixed(0)}, max ${ms.at(-1)?.toFixed(0)}), ${Math.round(LINES / (median / 1000)).toLocaleString('en')} lines/s${target === undefined ? '' : `, ${median <= target ? 'within' : 'OVER'} the ${target} ms target`}; leaked keys: ${leaked}`,
  );
}

console.log(`${LINES.toLocaleString('en')} journal lines, ${REPS} passes each`);
time('events (redactSecretsDeep per event)', () => events.map((e) => JSON.stringify(redactSecretsDeep(e))).join('\n'), TARGET_MS);
time('text lines (redactSecrets per line)', () => lines.map((l) => redactSecrets(l)).join('\n'));
time('text in 1 MB pieces (redactSecrets per piece, as /files/)', () => {
  const text = lines.join('\n');
  const out: string[] = [];
  for (let at = 0; at < text.length; ) {
    const cut = text.indexOf('\n', at + 1024 * 1024);
    const end = cut === -1 ? text.length : cut + 1;
    out.push(redactSecrets(text.slice(at, end)));
    at = end;
  }
  return out.join('');
});
