// `refinery logs bundle RUN`: one turn as one self-contained HTML file to share (the report with
// its Mermaid drawn, every answer, every vote with its reason, the timeline, the config), redacted
// before anything is written unless --no-redact says otherwise.
import { readFileSync, realpathSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { loadBackendsConfig } from '../../workflows/backends/config-file.ts';
import { collectBundle } from '../../workflows/massgen/bundle-data.ts';
import { renderBundleHtml } from '../../workflows/massgen/bundle-html.ts';
import { BundleRedactor, parseRedactPattern } from '../../workflows/massgen/bundle-redact.ts';
import type { TurnUnit } from '../../workflows/massgen/model.ts';
import { writeFilesAtomically } from '../../workflows/massgen/write-files.ts';
import { vendorAssetPath, type VendorAsset } from '../../engine/paths/vendor-asset.ts';
import { SECRET_ENV_NAME } from '../../security/known-secrets.ts';
import type { CommandIo } from '../command.ts';
import { BUNDLE_USAGE } from './logs-usage.ts';
import { runFolder, turnOf } from './logs-target.ts';

type Fail = (message: string, code?: number) => number;

/** Where a bundle goes without --out, under the project root. */
export const BUNDLES_DIR = '.refinery/bundles';

async function pickTurn(io: CommandIo, logsDir: string, run: string, turn: number | undefined): Promise<TurnUnit | string> {
  const found = await runFolder(io.cwd, logsDir, run);
  return 'error' in found ? found.error : turnOf(found.folder, turn);
}

/** Values of the environment's key variables, and of those refinery.config.yaml names (api_key_env). */
function environmentSecrets(io: CommandIo): string[] {
  const names = new Set(Object.keys(io.env).filter((n) => SECRET_ENV_NAME.test(n)));
  try {
    for (const backend of Object.values(loadBackendsConfig(io.cwd).backends)) {
      const name = (backend as { api_key_env?: string }).api_key_env;
      if (name) names.add(name);
    }
  } catch {
    // No refinery.config.yaml (or a broken one): the environment's own names still count.
  }
  return [...names].map((n) => io.env[n]).filter((v): v is string => typeof v === 'string' && v.length > 0);
}

function realOrSame(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
}

function readAsset(name: VendorAsset): string | undefined {
  const file = vendorAssetPath(name);
  return file ? readFileSync(file, 'utf8') : undefined;
}

export async function bundleCommand(argv: string[], io: CommandIo, fail: Fail): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      turn: { type: 'string', short: 't' },
      out: { type: 'string', short: 'o' },
      'logs-dir': { type: 'string' },
      redact: { type: 'string', multiple: true },
      'no-redact': { type: 'boolean' },
    },
  });
  const [run, ...extra] = positionals;
  if (!run)
    return fail(
      `bundle needs RUN: a log_* name from \`refinery logs list\`, or the path of a log_*, turn_N or attempt_M folder\n${BUNDLE_USAGE}`,
    );
  if (extra.length > 0) return fail(`bundle takes one RUN, got also: ${extra.join(' ')}`);
  const turn = values.turn === undefined ? undefined : Number(values.turn);
  if (turn !== undefined && (!Number.isInteger(turn) || turn < 0)) return fail(`--turn must be a turn number, got '${values.turn}'`);
  const noRedact = values['no-redact'] === true;
  if (noRedact && values.redact?.length) return fail('--no-redact and --redact exclude each other');
  const patterns: RegExp[] = [];
  for (const source of values.redact ?? []) {
    const parsed = parseRedactPattern(source);
    if (typeof parsed === 'string') return fail(parsed);
    patterns.push(parsed);
  }
  if (values.out !== undefined && !values.out.endsWith('.html')) return fail(`--out must name an .html file, got '${values.out}'`);
  const scripts = { marked: readAsset('marked.umd.js'), purify: readAsset('purify.min.js'), mermaid: readAsset('mermaid.min.js') };
  const missing = Object.entries(scripts)
    .filter(([, text]) => text === undefined)
    .map(([name]) => name);
  if (missing.length > 0)
    return fail(
      `the browser libraries for the bundle are missing (${missing.join(', ')}); reinstall refinery (npm ci builds dist/vendor)`,
      1,
    );

  const logsDir = path.resolve(io.cwd, values['logs-dir'] ?? '.massgen/massgen_logs');
  const unit = await pickTurn(io, logsDir, run, turn);
  if (typeof unit === 'string') return fail(unit);
  const session = path.basename(unit.logDir);
  const data = await collectBundle(unit, {
    signal: io.signal,
    redactor: (found) =>
      noRedact
        ? null
        : new BundleRedactor({
            secrets: [...environmentSecrets(io), ...found.secrets],
            patterns,
            session,
            runFolders: [...found.runFolders, path.dirname(unit.logDir), realOrSame(path.dirname(unit.logDir)), io.cwd, realOrSame(io.cwd)],
            homeDirs: [os.homedir(), io.env.HOME ?? ''].filter((h) => h !== ''),
          }),
  });
  if (io.signal.aborted) return 130;
  const html = renderBundleHtml(data, scripts as { marked: string; purify: string; mermaid: string });
  // A bundle is megabytes (the browser libraries are inside): by default it goes under .refinery/,
  // out of the project's own files and out of what git sees, rather than into the project root.
  const out = path.resolve(io.cwd, values.out ?? path.join(BUNDLES_DIR, `massgen-${session}-turn_${unit.turn}.html`));
  await writeFilesAtomically(path.dirname(out), [[path.basename(out), html]]);
  const shown = path.relative(io.cwd, out).startsWith('..') ? out : path.relative(io.cwd, out);
  io.stdout.write(
    `wrote ${shown} (${Math.round(Buffer.byteLength(html) / 1024)} KiB): ${data.session} turn ${data.turn}, ${data.answers.length} answer text(s), ${data.votes.length} vote(s), ${data.timeline.length} timeline event(s)\n`,
  );
  if (!data.redaction.enabled)
    io.stdout.write(
      'NOT redacted (--no-redact): the file may hold e-mail addresses, local paths and secrets of the MassGen config; keys and tokens were redacted as the logs were read\n',
    );
  else {
    const counts = Object.entries(data.redaction.counts).map(([kind, n]) => `${kind} ${n}`);
    io.stdout.write(`redacted ${data.redaction.total}: ${counts.length ? counts.join(', ') : 'nothing found'}\n`);
  }
  return 0;
}
