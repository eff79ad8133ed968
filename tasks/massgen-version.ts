// massgen-version: `<massgen> --version` for every experiment cell's fingerprint, asked again only
// when the files that say which MassGen the command starts changed (the stage's reads).
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { splitWords } from '../src/workflows/massgen/experiments/command-words.ts';
import { massgenIdentity } from '../src/workflows/massgen/experiments/massgen-identity.ts';
import { massgenVersion } from '../src/workflows/massgen/experiments/massgen-version.ts';
import { defineTask } from '../src/task/define-task.ts';

export default defineTask({
  name: 'massgen-version',
  description: "The MassGen version (`massgen --version`), so that a new MassGen runs the experiment grid's cells again",
  params: z.object({
    massgen: z
      .string()
      .min(1)
      .default('massgen')
      .describe('The MassGen command, words split as a shell would (no shell runs): massgen, uv run massgen'),
  }),
  outputs: { version: { schema: 'massgen-inputs', description: '{ kind: massgen-version, command, version }' } },
  async run(ctx) {
    const command = splitWords(ctx.params.massgen);
    // Which MassGen the command starts: while none of these changes, neither does its version.
    const reads = massgenIdentity(command, ctx.root, process.env);
    const version = await massgenVersion(command, ctx.root, process.env, ctx.signal);
    const out = ctx.outputs.version;
    if (!out) throw new Error('massgen-version: the stage must declare the output "version"');
    await mkdir(path.dirname(out), { recursive: true });
    await writeFile(out, `${JSON.stringify({ kind: 'massgen-version', command, version }, null, 2)}\n`);
    return { summary: version, reads };
  },
});
