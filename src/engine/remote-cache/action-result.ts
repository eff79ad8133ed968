// The Remote Execution API's ActionResult (build.bazel.remote.execution.v2), the body of every
// `/ac/` entry: bazel-remote refuses other bodies unless started with --disable_http_ac_validation.
// refinery writes only output files (flattened, no output directories), an exit code and the
// worker name; it reads whatever a server stored, ignoring fields it does not use.
import { MessageWriter, readFields, signed, WireFormatError } from './protobuf-wire.ts';

export interface Digest {
  /** sha256, 64 lowercase hex digits. */
  hash: string;
  sizeBytes: number;
}

export interface OutputFile {
  /** POSIX path relative to the project root. */
  path: string;
  digest: Digest;
  isExecutable: boolean;
}

export interface ActionResult {
  outputFiles: OutputFile[];
  exitCode: number;
  /** execution_metadata.worker: "refinery/<version>", so an entry is never 0 bytes. */
  worker: string;
  /** Output directories or symlinks: refinery never writes them, and refuses entries that have them. */
  otherOutputs: number;
}

function encodeDigest(d: Digest): Buffer {
  return new MessageWriter().string(1, d.hash).varint(2, d.sizeBytes).finish();
}

/** Fields in tag order, defaults left out, no unknown or repeated scalar fields (REAPI's canonical form). */
export function encodeActionResult(result: Pick<ActionResult, 'outputFiles' | 'exitCode' | 'worker'>): Buffer {
  const w = new MessageWriter();
  for (const f of result.outputFiles) {
    w.message(2, new MessageWriter().string(1, f.path).message(2, encodeDigest(f.digest)).varint(4, f.isExecutable).finish());
  }
  w.varint(4, result.exitCode);
  w.message(9, new MessageWriter().string(1, result.worker).finish());
  return w.finish();
}

function text(value: Buffer): string {
  return new TextDecoder('utf-8', { fatal: true }).decode(value);
}

function decodeDigest(buf: Buffer): Digest {
  let hash = '';
  let size = 0n;
  for (const f of readFields(buf)) {
    if (f.field === 1 && f.wire === 2) hash = text(f.value);
    else if (f.field === 2 && f.wire === 0) size = signed(f.value);
  }
  if (size > BigInt(Number.MAX_SAFE_INTEGER) || size < 0n) throw new WireFormatError(`digest size ${size} out of range`);
  return { hash, sizeBytes: Number(size) };
}

function decodeOutputFile(buf: Buffer): OutputFile {
  let path = '';
  let digest: Digest | undefined;
  let isExecutable = false;
  for (const f of readFields(buf)) {
    if (f.field === 1 && f.wire === 2) path = text(f.value);
    else if (f.field === 2 && f.wire === 2) digest = decodeDigest(f.value);
    else if (f.field === 4 && f.wire === 0) isExecutable = f.value !== 0n;
  }
  if (!digest) throw new WireFormatError(`output file '${path}' has no digest`);
  return { path, digest, isExecutable };
}

/** Throws WireFormatError (or a TypeError for text that is not UTF-8) on bytes that are no ActionResult. */
export function decodeActionResult(buf: Buffer): ActionResult {
  const result: ActionResult = { outputFiles: [], exitCode: 0, worker: '', otherOutputs: 0 };
  for (const f of readFields(buf)) {
    if (f.field === 2 && f.wire === 2) result.outputFiles.push(decodeOutputFile(f.value));
    else if ((f.field === 3 || f.field === 10 || f.field === 11 || f.field === 12) && f.wire === 2) result.otherOutputs += 1;
    else if (f.field === 4 && f.wire === 0) result.exitCode = Number(BigInt.asIntN(32, f.value));
    else if (f.field === 9 && f.wire === 2) {
      for (const m of readFields(f.value)) if (m.field === 1 && m.wire === 2) result.worker = text(m.value);
    }
  }
  return result;
}
