import { readdir } from 'node:fs/promises';

/**
 * The names of a folder's subfolders, sorted; [] when it cannot be read. The kind comes with the
 * listing (no lstat of each entry, which a folder of 1,000 runs or jobs makes slow), and a
 * symbolic link to a folder is not one.
 */
export async function subdirNames(dir: string): Promise<string[]> {
  try {
    const entries = await readdir(dir, { withFileTypes: true });
    return entries
      .filter((e) => e.isDirectory())
      .map((e) => e.name)
      .sort();
  } catch {
    return [];
  }
}
