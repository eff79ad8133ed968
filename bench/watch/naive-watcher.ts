// The peer of `refinery watch` in bench/watch: what a user would script in a few lines.
// fs.watch over src/, and on every event the whole pipeline again with `refinery run`
// (one run at a time; events during a run ask for one more). Its stdout is the runs' --json lines.
// Usage: node naive-watcher.ts CLI PIPELINE (cwd: the project)
import { spawn } from 'node:child_process';
import { watch } from 'node:fs';

const [cli, pipeline] = process.argv.slice(2) as [string, string];
let running = false;
let again = false;

function runOnce(): void {
  if (running) {
    again = true;
    return;
  }
  running = true;
  const child = spawn(process.execPath, [cli, 'run', pipeline, '--json'], {
    stdio: ['ignore', 'inherit', 'inherit'],
    env: { ...process.env, CI: 'true' },
  });
  child.on('close', () => {
    running = false;
    if (again) {
      again = false;
      runOnce();
    } else process.stderr.write('naive: idle\n');
  });
}

const watcher = watch('src', { recursive: true }, () => runOnce());
process.stderr.write('naive watcher ready\n');
process.on('SIGINT', () => {
  watcher.close();
  process.exit(0);
});
