import { parseArgs } from 'node:util';
import type { Command, CommandIo } from '../command.ts';
import { parseOrReport } from '../flags.ts';

const USAGE = `Usage: refinery ui [options]
       refinery ui list

Serves the project's dashboard: pipelines (the DAG, each stage's state, why it would run, its
outputs and logs), runs (history, a Gantt of each), MassGen analyses (reports, answers, votes,
timelines, charts across runs), refine sessions (scores per criterion per round, verdicts, votes)
and delegated jobs. Live: runs started anywhere in the project appear as they go. Prints the URL
with this start's token; every request needs it (it becomes a cookie after the first page).
Read-only unless started with --allow-actions. \`refinery watch --ui\` attaches it to a watch.

list     print the URL of each dashboard running for this project

Options:
      --port N          port to listen on (default: a free one)
      --host HOST       address to bind (default 127.0.0.1); any other than loopback needs --token
      --token TOKEN     the token to require (default: a fresh random one); at least 16 characters
      --allow-actions   let the dashboard run a pipeline or a stage (--force too) and abort runs it started
      --logs-dir D      a MassGen logs folder inside the project (repeatable; default:
                        .massgen/massgen_logs and the logs param of the project's pipelines)

Exit codes: 0 stopped by Ctrl-C/SIGTERM; 1 the port could not be opened; 2 the arguments are wrong.`;

interface UiFlags {
  port?: string;
  host: string;
  token?: string;
  'allow-actions': boolean;
  'logs-dir': string[];
}

export interface UiSettings {
  port: number;
  host: string;
  token?: string;
  allowActions: boolean;
  logsDirs?: string[];
}

/** Checks the dashboard's flags (shared with `watch --ui`); an error message when they are wrong. */
export async function checkUiSettings(
  root: string,
  flags: { port?: string; host?: string; token?: string; allowActions?: boolean; logsDirs?: readonly string[] },
): Promise<UiSettings | string> {
  const { isLoopbackHost } = await import('../../ui/http-security.ts');
  const { checkLogsDir } = await import('../../ui/logs-dirs.ts');
  const port = flags.port === undefined ? 0 : Number(flags.port);
  if (flags.port !== undefined && (!/^\d+$/.test(flags.port) || port > 65535))
    return `--port ${flags.port}: expected a port number 0-65535`;
  const host = flags.host ?? '127.0.0.1';
  if (flags.token !== undefined && (flags.token.length < 16 || !/^[A-Za-z0-9._~-]+$/.test(flags.token)))
    return '--token: at least 16 characters, letters, digits and . _ ~ - only';
  if (!isLoopbackHost(host) && flags.token === undefined) {
    return `--host ${host} would open the dashboard to the network; give --token TOKEN as well (a long random secret) if that is what you want`;
  }
  let logsDirs: string[] | undefined;
  if (flags.logsDirs && flags.logsDirs.length > 0) {
    logsDirs = [];
    for (const d of flags.logsDirs) {
      const checked = checkLogsDir(root, d);
      if (!checked.ok) return checked.error;
      logsDirs.push(checked.dir);
    }
  }
  return {
    port,
    host,
    ...(flags.token ? { token: flags.token } : {}),
    allowActions: flags.allowActions ?? false,
    ...(logsDirs ? { logsDirs } : {}),
  };
}

function waitFor(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });
}

async function list(io: CommandIo): Promise<number> {
  const { listServers } = await import('../../ui/server-list.ts');
  const servers = listServers(io.cwd);
  if (servers.length === 0) {
    io.stdout.write('no dashboard is running for this project (start one: refinery ui)\n');
    return 0;
  }
  for (const s of servers)
    io.stdout.write(`${s.url}  (${s.mode === 'watch' ? 'refinery watch --ui' : 'refinery ui'}, pid ${s.pid}, since ${s.startedAt})\n`);
  return 0;
}

async function run(argv: string[], io: CommandIo): Promise<number> {
  const parsed = parseOrReport(io, 'ui', USAGE, () =>
    parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        port: { type: 'string' },
        host: { type: 'string', default: '127.0.0.1' },
        token: { type: 'string' },
        'allow-actions': { type: 'boolean', default: false },
        'logs-dir': { type: 'string', multiple: true, default: [] },
      },
    }),
  );
  if (!parsed) return 2;
  const flags = parsed.values as UiFlags;
  const [sub, ...extra] = parsed.positionals;
  if (sub === 'list' && extra.length === 0) return list(io);
  if (sub !== undefined) {
    io.stderr.write(`refinery ui: unknown argument '${sub}'\n${USAGE}\n`);
    return 2;
  }
  const settings = await checkUiSettings(io.cwd, {
    ...(flags.port !== undefined ? { port: flags.port } : {}),
    host: flags.host,
    ...(flags.token !== undefined ? { token: flags.token } : {}),
    allowActions: flags['allow-actions'],
    logsDirs: flags['logs-dir'],
  });
  if (typeof settings === 'string') {
    io.stderr.write(`refinery ui: ${settings}\n`);
    return 2;
  }
  const { startDashboard } = await import('../../ui/dashboard.ts');
  let dashboard;
  try {
    dashboard = await startDashboard({ root: io.cwd, ...settings, mode: 'standalone' });
  } catch (error) {
    io.stderr.write(`refinery ui: cannot serve on ${settings.host}:${settings.port}: ${(error as Error).message}\n`);
    return 1;
  }
  io.stdout.write(`${dashboard.url}\n`);
  io.stderr.write(`ui: serving ${io.cwd}${settings.allowActions ? ' (actions allowed)' : ' (read-only)'}; Ctrl-C to stop\n`);
  await waitFor(io.signal);
  await dashboard.close();
  return 0;
}

export const uiCommand: Command = { name: 'ui', summary: 'Serve the live dashboard', usage: USAGE, run };
