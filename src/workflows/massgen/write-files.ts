// Writes several files of one folder so that readers see old or new, never half: each goes to a
// temp file in the same folder first, then all are renamed into place.
import { randomBytes } from 'node:crypto';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';

export async function writeFilesAtomically(dir: string, files: readonly (readonly [name: string, text: string])[]): Promise<void> {
  await mkdir(dir, { recursive: true });
  const suffix = `${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  const temps = files.map(([name, text]) => [path.join(dir, `.${name}.${suffix}`), path.join(dir, name), text] as const);
  try {
    for (const [tmp, , text] of temps) await writeFile(tmp, text, { flag: 'wx' });
    for (const [tmp, final] of temps) await rename(tmp, final);
  } finally {
    for (const [tmp] of temps) await rm(tmp, { force: true });
  }
}
