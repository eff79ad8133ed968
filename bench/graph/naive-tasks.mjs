// The naive peer of refinery's in-process task stages: the same task module, called once per
// stage in order, writing straight to the output paths: no fingerprints, no staging, no state.
// Usage (in a bench project folder): node naive-tasks.mjs dag.json
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { register } from 'tsx/esm/api';

register();
const stages = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const task = (await import(pathToFileURL(path.resolve('tasks/checksum.ts')).href)).default;
const controller = new AbortController();
for (const stage of stages) {
  await task.run({ params: task.params.parse({ files: stage.inputs }), outputs: { o: stage.output }, signal: controller.signal });
}
