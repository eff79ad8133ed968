// Generate synthetic MassGen v0.1.91 logs (deterministic for a seed).
//   npx tsx scripts/gen-massgen-logs.ts --out DIR [--seed N] [--scenario NAME]... [--events-bytes N]
import { parseArgs } from 'node:util';
import { GenerateError, generateLogs } from '../dev/massgen-gen/generate.ts';
import { SCENARIO_NAMES } from '../dev/massgen-gen/scenarios.ts';
import { ScenarioError } from '../dev/massgen-gen/simulate.ts';

const USAGE = `usage: npx tsx scripts/gen-massgen-logs.ts --out DIR [--seed N] [--scenario NAME]... [--events-bytes N]
  --out DIR           folder that receives the log_* dirs and MANIFEST.json (a .massgen/massgen_logs stand-in)
  --seed N            non-negative integer (default 1)
  --scenario NAME     one of: ${SCENARIO_NAMES.join(', ')} (repeatable; default: all)
  --events-bytes N    pad every events.jsonl to about N bytes (suffixes k, m, g allowed: 1g = 1e9)`;

function parseBytes(text: string): number {
  const m = /^(\d+(?:\.\d+)?)([kmg]?)b?$/i.exec(text.trim());
  if (!m) throw new GenerateError(`--events-bytes '${text}' is not a size; use e.g. 1000000, 500k, 20m or 1g`);
  const scale = { '': 1, k: 1e3, m: 1e6, g: 1e9 }[(m[2] ?? '').toLowerCase()] ?? 1;
  return Math.round(Number(m[1]) * scale);
}

function main(argv: string[]): number {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        out: { type: 'string' },
        seed: { type: 'string' },
        scenario: { type: 'string', multiple: true },
        'events-bytes': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
    }));
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n${USAGE}\n`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  try {
    if (!values.out) throw new GenerateError('--out DIR is required');
    const seed = values.seed === undefined ? 1 : Number(values.seed);
    if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff)
      throw new GenerateError(`--seed '${values.seed}' must be an integer in 0..4294967295`);
    const eventsBytes = values['events-bytes'] === undefined ? null : parseBytes(values['events-bytes']);
    const started = performance.now();
    const result = generateLogs({ outDir: values.out, seed, scenarios: values.scenario, eventsBytes });
    const secs = (performance.now() - started) / 1000;
    process.stdout.write(
      `wrote ${result.logDirs.length} log dirs (${result.files} files, events.jsonl total ${result.eventsBytes} bytes) to ${values.out} in ${secs.toFixed(2)}s\n`,
    );
    for (const name of result.logDirs) process.stdout.write(`  ${name}\n`);
    return 0;
  } catch (error) {
    if (error instanceof GenerateError || error instanceof ScenarioError) {
      process.stderr.write(`gen-massgen-logs: ${error.message}\n`);
      return 2;
    }
    throw error;
  }
}

process.exitCode = main(process.argv.slice(2));
