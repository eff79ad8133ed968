// The least a Node program can do for a cold no-op: start, and stat once every file the check
// looks at (each stage's inputs and outputs), with the same call refinery's check makes. No
// record is read and nothing is compared or written, so a no-op can only take longer.
// Usage (in a bench project folder): node stat-floor.mjs paths.txt
import { readFileSync, statSync } from 'node:fs';

let size = 0;
for (const file of readFileSync(process.argv[2], 'utf8').split('\n')) {
  if (file === '') continue;
  size += statSync(file, { throwIfNoEntry: false })?.size ?? 0;
}
// Used, so the loop is not optimized away.
if (size < 0) process.exitCode = 1;
