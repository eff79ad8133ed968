// pack-massgen-log: an experiment cell's MassGen log dir as one file for the remote cache, when it is under the size cap.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import type { ExperimentRecord } from '../src/workflows/massgen/experiments/experiment-record.ts';
import { packLogDir, writeLogPack } from '../src/workflows/massgen/experiments/log-pack.ts';
import { defineTask } from '../src/task/define-task.ts';

export default defineTask({
  name: 'pack-massgen-log',
  description:
    "Pack an experiment cell's MassGen log dir (text redacted) into one gzipped file when it is at most cap_mb; over it the pack says why and holds no file",
  params: z.object({
    experiment: z.string().min(1).describe("The cell's experiment.json"),
    cap_mb: z.number().min(0).describe('The largest log dir packed, in MB (10^6 bytes)'),
  }),
  outputs: { pack: { description: 'log-pack.json.gz: the log dir, or why it was not packed' } },
  async run(ctx) {
    const record = JSON.parse(await readFile(path.resolve(ctx.root, ctx.params.experiment), 'utf8')) as ExperimentRecord;
    if (!record.log_dir)
      throw new Error(`pack-massgen-log: the run of ${record.config} (repeat ${record.repeat}) printed no LOG_DIR: nothing to pack`);
    if (path.isAbsolute(record.log_dir))
      throw new Error(`pack-massgen-log: the log dir ${record.log_dir} is outside the project; only a log dir inside it can be shared`);
    const out = ctx.outputs.pack;
    if (!out) throw new Error('pack-massgen-log: the stage must declare the output "pack"');
    const pack = packLogDir(ctx.root, record.log_dir, Math.floor(ctx.params.cap_mb * 1e6));
    writeLogPack(out, pack);
    return { summary: pack.packed ? `${pack.files.length} files, ${pack.bytes} bytes` : `not packed: ${pack.reason}` };
  },
});
