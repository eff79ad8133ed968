// Child process of bench/analyze/run.ts: runs one measured workload and prints one JSON line
// {mode, ms, maxRssKb, result} on stdout. Modes: analyze <turnDir> | naive <events.jsonl>.
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { analyzeTurn } from './analyze-adapter.ts';

async function naive(file: string): Promise<Record<string, unknown>> {
  const lines = createInterface({ input: createReadStream(file), crlfDelay: Infinity });
  let count = 0;
  let answers = 0;
  let votes = 0;
  for await (const line of lines) {
    if (line.length === 0) continue;
    const event = JSON.parse(line) as { event_type?: string };
    count++;
    if (event.event_type === 'answer_submitted') answers++;
    else if (event.event_type === 'vote') votes++;
  }
  return { lines: count, answers, votes };
}

async function main(): Promise<void> {
  const [mode, target] = process.argv.slice(2);
  if (!target || (mode !== 'analyze' && mode !== 'naive')) throw new Error('usage: child.ts analyze <turnDir> | naive <events.jsonl>');
  const started = performance.now();
  const result = mode === 'analyze' ? await analyzeTurn(target) : await naive(target);
  const ms = performance.now() - started;
  process.stdout.write(`${JSON.stringify({ mode, ms, maxRssKb: process.resourceUsage().maxRSS, result })}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
