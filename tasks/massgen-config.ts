// massgen-config: what one MassGen config is made of (its bytes and the files it names), for its cells' fingerprints.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { configFingerprint } from '../src/workflows/massgen/experiments/config-files.ts';
import { defineTask } from '../src/task/define-task.ts';

export default defineTask({
  name: 'massgen-config',
  description: 'Hash a MassGen config and the files it names (prompt files, tools) that can be found',
  params: z.object({ config: z.string().min(1).describe('The config, relative to the project root') }),
  outputs: { fingerprint: { schema: 'massgen-inputs', description: '{ kind: massgen-config, config, sha256, files }' } },
  async run(ctx) {
    const fingerprint = await configFingerprint(ctx.root, ctx.params.config).catch((error: NodeJS.ErrnoException) => {
      throw new Error(`massgen-config: cannot read ${ctx.params.config}: ${error.code ?? error.message}`);
    });
    const out = ctx.outputs.fingerprint;
    if (!out) throw new Error('massgen-config: the stage must declare the output "fingerprint"');
    await mkdir(path.dirname(out), { recursive: true });
    const { looked, ...record } = fingerprint;
    await writeFile(out, `${JSON.stringify({ kind: 'massgen-config', ...record }, null, 2)}\n`);
    const named = Object.keys(fingerprint.files).length;
    return {
      summary: `${fingerprint.sha256.slice(0, 12)}${named ? `, ${named} named file${named === 1 ? '' : 's'}` : ''}`,
      // Found by reading the config: the stage runs again when one of them changes, appears or goes.
      reads: looked,
    };
  },
});
