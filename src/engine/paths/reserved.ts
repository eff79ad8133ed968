/** Folders refinery manages itself; stage outputs may live anywhere else, `.refinery/sessions/` included. */
const RESERVED = ['.refinery/state', '.refinery/cache', '.refinery/staging', '.refinery/rejected', '.refinery/runs', '.refinery/lock'];

export function isReservedPath(normalized: string): boolean {
  return normalized === '.refinery' || RESERVED.some((r) => normalized === r || normalized.startsWith(`${r}/`));
}
