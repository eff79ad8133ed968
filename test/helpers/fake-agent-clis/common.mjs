// Shared by the fake agent CLIs: read stdin, log the invocation, pick the reply.
import { appendFileSync, readFileSync } from 'node:fs';

export async function readStdin() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  return Buffer.concat(chunks).toString('utf8');
}

/** The value after `flag` in argv, if given. */
export function argValue(flag) {
  const argv = process.argv.slice(2);
  const i = argv.indexOf(flag);
  return i >= 0 ? argv[i + 1] : undefined;
}

/** Appends {cli, argv, stdin, ...extra} to $FAKE_AGENT_LOG when set (tests assert the prompt came on stdin). */
export function logInvocation(cli, stdin, extra = {}) {
  if (process.env.FAKE_AGENT_LOG)
    appendFileSync(process.env.FAKE_AGENT_LOG, `${JSON.stringify({ cli, argv: process.argv.slice(2), stdin, ...extra })}\n`);
}

/** The reply text: $FAKE_AGENT_REPLY_FILE's content, else an echo of the prompt's first line. */
export function replyText(stdin) {
  if (process.env.FAKE_AGENT_REPLY_FILE) return readFileSync(process.env.FAKE_AGENT_REPLY_FILE, 'utf8');
  return `echo: ${stdin.split('\n')[0]}`;
}

export function mode() {
  return process.env.FAKE_AGENT_MODE ?? 'ok';
}

export async function maybeSlow() {
  const ms = Number(process.env.FAKE_AGENT_DELAY_MS ?? 0);
  if (ms > 0) await new Promise((resolve) => setTimeout(resolve, ms));
}

export function requireArgs(cli, expected) {
  const argv = process.argv.slice(2);
  for (const arg of expected)
    if (!argv.includes(arg)) {
      process.stderr.write(`${cli}: error: missing argument ${arg} (got ${JSON.stringify(argv)})\n`);
      process.exit(2);
    }
}
