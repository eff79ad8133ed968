/**
 * Whether a file's stat, taken at `statMs` or later, can be trusted to change when its content
 * does (git's "racy clean" problem). A write lands in the mtime's clock tick; a second write of
 * the same size in that same tick, after the stat, keeps size, mtime and inode, and no stat
 * can tell. So a stat is settled only once the mtime is older than the tick at the time it was
 * taken.
 *
 * The window covers the file system's timestamp resolution, which the mtime itself betrays:
 * - with a sub-second part (ext4, xfs, btrfs, tmpfs, APFS, NTFS, exFAT's 10 ms), Linux stamps
 *   writes from its coarse clock, one jiffy (1–10 ms) behind: 20 ms covers that with room to
 *   spare, and exFAT's 10 ms steps;
 * - in whole seconds (ext3, HFS+, FAT's 2 s, some network file systems, or an mtime set by
 *   hand): 2 s.
 * A whole-second mtime on a fine file system (one chance in a billion) only costs a check by
 * content. An mtime ahead of the clock (a network server's clock) is never settled.
 */
export function settledStat(mtimeMs: number, statMs: number): boolean {
  return statMs - mtimeMs >= (mtimeMs % 1000 === 0 ? 2000 : 20);
}
