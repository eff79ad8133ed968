// A MassGen log dir as one file, so the remote cache (which shares a stage's declared output
// files) can carry it to another clone: every regular file and in-dir symlink of the dir, text
// redacted of known secrets, in gzipped JSON. Packed only under a size cap the user sets; over
// it the pack says so and holds no file. Restored only where the log dir is missing, each path
// checked to stay inside it.
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { redactSecrets } from '../../../security/known-secrets.ts';

export interface LogPackFile {
  /** '/'-separated, relative to the log dir. */
  path: string;
  /** Base64 of the bytes (a regular file). */
  data?: string;
  /** The target of a symlink, relative and inside the log dir. */
  link?: string;
  executable?: boolean;
}

export interface LogPack {
  schema_version: 1;
  /** Root-relative, as experiment.json names it. */
  log_dir: string;
  bytes: number;
  cap_bytes: number;
  packed: boolean;
  /** Why not packed. */
  reason?: string;
  files: LogPackFile[];
}

function inside(base: string, target: string): boolean {
  const rel = path.relative(base, target);
  return rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel);
}

/** Files of a dir (no symlink followed), paths relative to it. */
function walk(dir: string, rel = ''): Array<{ rel: string; abs: string }> {
  const out: Array<{ rel: string; abs: string }> = [];
  for (const name of readdirSync(path.join(dir, rel)).sort()) {
    const r = rel ? `${rel}/${name}` : name;
    const abs = path.join(dir, r);
    const info = lstatSync(abs);
    if (info.isDirectory()) out.push(...walk(dir, r));
    else if (info.isFile() || info.isSymbolicLink()) out.push({ rel: r, abs });
  }
  return out;
}

/** The log dir packed when its files add up to `capBytes` at most; else a pack that says why not. */
export function packLogDir(root: string, logDir: string, capBytes: number): LogPack {
  const dir = path.resolve(root, logDir);
  const base = { schema_version: 1 as const, log_dir: logDir, cap_bytes: capBytes };
  // A clone that got the run from the remote cache (and packs with another cap) has no log here.
  if (!existsSync(dir)) return { ...base, bytes: 0, packed: false, reason: `the log dir ${logDir} is not in this clone`, files: [] };
  const entries = walk(dir);
  const bytes = entries.reduce((sum, e) => sum + lstatSync(e.abs).size, 0);
  if (bytes > capBytes)
    return {
      ...base,
      bytes,
      packed: false,
      reason: `the log dir holds ${bytes} bytes, over the cap of ${capBytes} (param log_dir_cap_mb)`,
      files: [],
    };
  const files: LogPackFile[] = [];
  for (const e of entries) {
    const info = lstatSync(e.abs);
    if (info.isSymbolicLink()) {
      const target = readlinkSync(e.abs);
      // Only a link that stays inside the log dir travels (MassGen's *_latest.txt links do).
      if (!path.isAbsolute(target) && inside(dir, path.resolve(path.dirname(e.abs), target))) files.push({ path: e.rel, link: target });
      continue;
    }
    const raw = readFileSync(e.abs);
    const text = raw.toString('utf8');
    // Text leaves this machine redacted like every artifact; other bytes as they are.
    const data = Buffer.from(text, 'utf8').equals(raw) ? Buffer.from(redactSecrets(text), 'utf8') : raw;
    files.push({ path: e.rel, data: data.toString('base64'), ...((info.mode & 0o100) !== 0 ? { executable: true } : {}) });
  }
  return { ...base, bytes, packed: true, files };
}

export function writeLogPack(file: string, pack: LogPack): void {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, gzipSync(Buffer.from(JSON.stringify(pack))));
}

export function readLogPack(file: string): LogPack {
  const value = JSON.parse(gunzipSync(readFileSync(file)).toString('utf8')) as LogPack;
  if (value?.schema_version !== 1 || typeof value.log_dir !== 'string' || !Array.isArray(value.files))
    throw new Error(`${file}: not a MassGen log pack (schema_version 1)`);
  return value;
}

/** A safe relative path: '/'-separated, no empty, '.' or '..' segment. */
function safeRel(rel: string): boolean {
  return rel.length > 0 && !path.isAbsolute(rel) && rel.split('/').every((s) => s !== '' && s !== '.' && s !== '..' && !s.includes('\\'));
}

/**
 * Writes a pack's files into its log dir under `root` when that dir is missing; a dir that exists
 * (this clone ran MassGen itself) is left as it is. Every path must stay inside the log dir.
 */
export function unpackLogDir(root: string, pack: LogPack): { restored: boolean; files: number; reason?: string } {
  if (!pack.packed) return { restored: false, files: 0, reason: pack.reason ?? 'not packed' };
  if (!safeRel(pack.log_dir)) throw new Error(`log pack: log_dir '${pack.log_dir}' is not a path inside the project`);
  const dir = path.join(root, pack.log_dir);
  if (existsSync(dir)) return { restored: false, files: 0, reason: 'the log dir is already here' };
  for (const f of pack.files)
    if (
      !safeRel(f.path) ||
      (f.link !== undefined && (path.isAbsolute(f.link) || !inside(dir, path.resolve(path.dirname(path.join(dir, f.path)), f.link))))
    )
      throw new Error(`log pack: '${f.path}' would leave the log dir ${pack.log_dir}`);
  // Written aside, then renamed into place: a crash leaves no half log dir that looks whole.
  const partial = `${dir}.partial`;
  rmSync(partial, { recursive: true, force: true });
  for (const f of pack.files) {
    const abs = path.join(partial, f.path);
    mkdirSync(path.dirname(abs), { recursive: true });
    if (f.link !== undefined) symlinkSync(f.link, abs);
    else writeFileSync(abs, Buffer.from(f.data ?? '', 'base64'), { mode: f.executable ? 0o755 : 0o644 });
  }
  mkdirSync(partial, { recursive: true });
  renameSync(partial, dir);
  return { restored: true, files: pack.files.length };
}
