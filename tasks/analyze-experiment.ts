// analyze-experiment: analyze-turn (the analyze pipeline's task) on the log of one experiment cell's MassGen run.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import type { ExperimentRecord } from '../src/workflows/massgen/experiments/experiment-record.ts';
import { defineTask } from '../src/task/define-task.ts';
import analyzeTurn from './analyze-turn.ts';

export default defineTask({
  name: 'analyze-experiment',
  description: "Analyze the MassGen log an experiment cell's run wrote (analysis.json + ANALYSIS_REPORT.md), as analyze-turn does",
  params: z.object({ experiment: z.string().min(1).describe("The cell's experiment.json") }),
  outputs: analyzeTurn.outputs,
  async run(ctx) {
    const record = JSON.parse(await readFile(path.resolve(ctx.root, ctx.params.experiment), 'utf8')) as ExperimentRecord;
    if (!record.turn_dir)
      throw new Error(
        `analyze-experiment: the run of ${record.config} (repeat ${record.repeat}) printed no LOG_DIR, so there is no log to analyze`,
      );
    // A failed or stopped run's log is analyzed too: its partial state says where it stopped.
    return analyzeTurn.run({ ...ctx, params: analyzeTurn.params.parse({ turn: record.turn_dir }) });
  },
});
