#!/bin/sh
":" //; { [ -S .refinery/watch/sock ] && [ -z "${REFINERY_NO_DAEMON+set}" ] || { [ "$1" = run ] && { [ -f .refinery/state/precheck ] || { [ -n "${NODE_EXTRA_CA_CERTS:-}" ] && [ -f .refinery/state/lean-start ]; }; } && [ -z "${REFINERY_NO_PRECHECK+set}" ]; }; } && command -v perl >/dev/null 2>&1 && exec perl -e 'my $f = $ARGV[0]; while (-l $f) { my $l = readlink($f); last unless defined $l; (my $d = $f) =~ s{[^/]*$}{}; $f = $l =~ m{^/} ? $l : $d . $l } $f =~ s{[^/]*$}{quick-client.pl}; do($f =~ m{^/} ? $f : "./$f"); exec "node", @ARGV' -- "$0" "$@"; exec node "$0" "$@"
// The line above is for /bin/sh, and a string and a comment to Node. With a `refinery watch`
// serving in the working folder, or for a `refinery run` where the last run left a large no-op
// record (.refinery/state/precheck; see src/engine/state/noop-precheck.ts) or, where
// NODE_EXTRA_CA_CERTS is set, a run that opened no TLS connection of its own
// (.refinery/state/lean-start; see src/cli/deferred-ca.ts), the shell starts
// bin/quick-client.pl (perl: 2 ms, where Node takes 50), which asks the watch, or starts the
// no-op pre-check (bin/noop-precheck.pl), and hands anything else back to Node; otherwise it
// starts Node on this very file at once. biome.json keeps the formatter off this file: it would
// turn line 2 into JavaScript that the shell cannot read.
// Runs the compiled engine from dist/ when it is up to date with src/ (fast start-up);
// otherwise runs the TypeScript sources through tsx's loader, so a clone works right after
// `npm ci` and while developing.
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import module from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const stamp = path.join(root, 'dist', '.stamp');

function newestMtime(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestMtime(full));
    else if (entry.name.endsWith('.ts')) newest = Math.max(newest, statSync(full).mtimeMs);
  }
  return newest;
}

function distIsFresh() {
  if (process.env.REFINERY_FROM_SOURCE) return false;
  // For benchmarks while sources are being edited: use the last build as it is.
  if (process.env.REFINERY_FROM_DIST && existsSync(stamp)) return true;
  if (!existsSync(stamp)) return false;
  // An installed package (no .git) is not edited in place: the walk over src/ (~7 ms of every
  // start) is only for a clone being developed.
  if (!existsSync(path.join(root, '.git'))) return true;
  return statSync(stamp).mtimeMs >= newestMtime(path.join(root, 'src'));
}

// V8's code cache for the modules below, where Node offers one (22.1 and later; Node 20 has no
// such switch, and a cachedData loader of our own is not worth what it would add).
module.enableCompileCache?.();

let main;
if (distIsFresh()) {
  // The bundle (one file for the start path, a chunk per command) when the build made one.
  const bundle = path.join(root, 'dist', 'bundle', 'main.mjs');
  ({ main } = await import(existsSync(bundle) ? pathToFileURL(bundle).href : '../dist/src/cli/main.js'));
} else {
  const { register } = await import('tsx/esm/api');
  register();
  globalThis[Symbol.for('refinery.tsx')] = true;
  ({ main } = await import('../src/cli/main.ts'));
}
process.exitCode = await main(process.argv.slice(2));
// An interrupted run is over once main returns: a task that ignored its abort signal (a timer, a
// request) must not keep the process alive. Both streams are drained first.
if (process.exitCode === 130) process.stdout.write('', () => process.stderr.write('', () => process.exit(130)));
