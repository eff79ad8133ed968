// A starter task written by `refinery init`. It counts the lines of its stage's input files
// with `wc -l`, run through zx's `$` (`ctx.$`: bound to the project root, stopped when the run
// is aborted; every `${value}` is quoted, an array becomes one argument per element), and writes
// a report that refinery checks against schemas/line-counts.schema.json before it puts it in place.
import { writeFile } from 'node:fs/promises';
import { defineTask, z } from 'refinery/task';

interface FileLines {
  path: string;
  lines: number;
}

export default defineTask({
  name: 'count-lines',
  description: 'Counts the lines of the stage inputs with wc -l.',
  // Strict: a `with:` key this task does not take (a typo) fails the stage instead of being ignored.
  params: z.strictObject({}),
  outputs: { counts: { default: 'reports/line-counts.json', schema: 'line-counts' } },
  async run(ctx) {
    const files: FileLines[] = [];
    if (ctx.inputs.length > 0) {
      // wc prints "<lines> <path>" per file, in argument order, then a total line when there are several.
      const { stdout } = await ctx.$`wc -l -- ${ctx.inputs}`;
      for (const row of stdout.split('\n').slice(0, ctx.inputs.length)) {
        const match = /^\s*(\d+)\s+(.*)$/.exec(row);
        if (!match) throw new Error(`count-lines: unexpected wc output: ${row}`);
        files.push({ path: match[2] as string, lines: Number(match[1]) });
      }
    }
    const total = files.reduce((sum, f) => sum + f.lines, 0);
    ctx.progress(1, `${files.length} files`);
    await writeFile(ctx.outputs.counts as string, `${JSON.stringify({ files, total }, null, 2)}\n`);
    return { summary: `${total} lines in ${files.length} files` };
  },
});
