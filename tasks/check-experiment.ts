// check-experiment: fails an experiment cell whose MassGen run failed, with its stderr and agent errors.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { type ExperimentRecord, failureText } from '../src/workflows/massgen/experiments/experiment-record.ts';
import { defineTask } from '../src/task/define-task.ts';

export default defineTask({
  name: 'check-experiment',
  description: "Pass when a cell's MassGen run succeeded; fail with its last stderr lines and its agents' errors otherwise",
  params: z.object({ experiment: z.string().min(1), timeout: z.number().min(0).default(0) }),
  async run(ctx) {
    const record = JSON.parse(await readFile(path.resolve(ctx.root, ctx.params.experiment), 'utf8')) as ExperimentRecord;
    if (!record.ok) throw new Error(failureText(record, ctx.params.timeout || undefined));
    return { summary: `ok: winner ${record.winner ?? 'none'}` };
  },
});
