// restore-massgen-log: puts a packed MassGen log dir (from this clone or the remote cache) in place when it is missing here.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { readLogPack, unpackLogDir } from '../src/workflows/massgen/experiments/log-pack.ts';
import { defineTask } from '../src/task/define-task.ts';

export default defineTask({
  name: 'restore-massgen-log',
  description:
    'Restore an experiment cell’s MassGen log dir from its pack when the dir is missing (a clone that got the cell from the remote cache)',
  params: z.object({ pack: z.string().min(1).describe("The cell's log-pack.json.gz") }),
  outputs: { restored: { description: 'log-restored.json: the log dir, whether it was packed, and what this clone did' } },
  async run(ctx) {
    const pack = readLogPack(path.resolve(ctx.root, ctx.params.pack));
    const outcome = unpackLogDir(ctx.root, pack);
    const out = ctx.outputs.restored;
    if (!out) throw new Error('restore-massgen-log: the stage must declare the output "restored"');
    await mkdir(path.dirname(out), { recursive: true });
    await writeFile(out, `${JSON.stringify({ log_dir: pack.log_dir, packed: pack.packed, ...outcome }, null, 2)}\n`);
    return { summary: outcome.restored ? `restored ${pack.log_dir} (${outcome.files} files)` : `${pack.log_dir}: ${outcome.reason}` };
  },
});
