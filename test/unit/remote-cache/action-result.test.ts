// The hand-written ActionResult encoder and decoder against protobufjs with the REAPI message
// definitions (test/fixtures/remote-cache/remote_execution.proto).
import path from 'node:path';
import protobuf from 'protobufjs';
import { describe, expect, it } from 'vitest';
import { decodeActionResult, encodeActionResult, type ActionResult } from '../../../src/engine/remote-cache/action-result.ts';
import { MessageWriter, readFields, WireFormatError } from '../../../src/engine/remote-cache/protobuf-wire.ts';
import { REPO_ROOT } from '../../helpers/project.ts';

const root = protobuf.loadSync(path.join(REPO_ROOT, 'test/fixtures/remote-cache/remote_execution.proto'));
const ActionResultType = root.lookupType('build.bazel.remote.execution.v2.ActionResult');

const HASH_A = 'a'.repeat(64);
const HASH_B = '0123456789abcdef'.repeat(4);

const SAMPLE: Pick<ActionResult, 'outputFiles' | 'exitCode' | 'worker'> = {
  outputFiles: [
    { path: 'logs/log_1/turn_1/analysis.json', digest: { hash: HASH_A, sizeBytes: 12_345 }, isExecutable: false },
    { path: 'out/tool.sh', digest: { hash: HASH_B, sizeBytes: 3_000_000_000 }, isExecutable: true },
    {
      path: '.refinery/manifest.json',
      digest: { hash: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855', sizeBytes: 0 },
      isExecutable: false,
    },
  ],
  exitCode: 0,
  worker: 'refinery/0.1.0',
};

function viaProtobufjs(result: typeof SAMPLE): Buffer {
  const message = ActionResultType.fromObject({
    outputFiles: result.outputFiles.map((f) => ({
      path: f.path,
      digest: { hash: f.digest.hash, sizeBytes: f.digest.sizeBytes },
      isExecutable: f.isExecutable,
    })),
    exitCode: result.exitCode,
    executionMetadata: { worker: result.worker },
  });
  return Buffer.from(ActionResultType.encode(message).finish());
}

describe('ActionResult encoding', () => {
  it('encoder - the bytes equal protobufjs encoding the same message with the REAPI definitions', () => {
    const ours = encodeActionResult(SAMPLE);
    expect(ours.toString('hex')).toBe(viaProtobufjs(SAMPLE).toString('hex'));
    const decoded = ActionResultType.toObject(ActionResultType.decode(ours), { longs: Number, defaults: true });
    expect(decoded.outputFiles).toEqual([
      expect.objectContaining({
        path: 'logs/log_1/turn_1/analysis.json',
        digest: { hash: HASH_A, sizeBytes: 12_345 },
        isExecutable: false,
      }),
      expect.objectContaining({ path: 'out/tool.sh', digest: { hash: HASH_B, sizeBytes: 3_000_000_000 }, isExecutable: true }),
      expect.objectContaining({ path: '.refinery/manifest.json', digest: { hash: SAMPLE.outputFiles[2]?.digest.hash, sizeBytes: 0 } }),
    ]);
    expect(decoded.exitCode).toBe(0);
    expect(decoded.executionMetadata.worker).toBe('refinery/0.1.0');
  });

  it('encoder - a non-zero and a negative exit code encode as protobufjs does', () => {
    for (const exitCode of [1, 255, -1, -2_147_483_648]) {
      const sample = { ...SAMPLE, exitCode };
      expect(encodeActionResult(sample).toString('hex')).toBe(viaProtobufjs(sample).toString('hex'));
      expect(decodeActionResult(encodeActionResult(sample)).exitCode).toBe(exitCode);
    }
  });

  it('encoder - the entry is never 0 bytes: the worker name is always written', () => {
    const empty = encodeActionResult({ outputFiles: [], exitCode: 0, worker: 'refinery/0.1.0' });
    expect(empty.length).toBeGreaterThan(0);
    expect(ActionResultType.toObject(ActionResultType.decode(empty)).executionMetadata.worker).toBe('refinery/0.1.0');
  });

  it('decoder - round-trips what it encodes', () => {
    expect(decodeActionResult(encodeActionResult(SAMPLE))).toEqual({ ...SAMPLE, otherOutputs: 0 });
  });

  it('decoder - reads what a server re-marshalled with fields refinery does not write, and counts directories and symlinks', () => {
    // What bazel-remote may store: timestamps in the metadata, inline contents, stdout digest, a tree.
    const message = ActionResultType.fromObject({
      outputFiles: [
        {
          path: 'a.txt',
          digest: { hash: HASH_A, sizeBytes: 5 },
          contents: Buffer.from('hello'),
          nodeProperties: { properties: [{ name: 'MTime', value: 'x' }], unixMode: { value: 0o644 } },
        },
      ],
      outputDirectories: [{ path: 'dir', treeDigest: { hash: HASH_B, sizeBytes: 10 } }],
      outputSymlinks: [{ path: 'link', target: 'a.txt' }],
      stdoutDigest: { hash: HASH_B, sizeBytes: 1 },
      executionMetadata: {
        worker: '10.0.0.7',
        queuedTimestamp: { seconds: 1_700_000_000, nanos: 5 },
        virtualExecutionDuration: { seconds: 3 },
      },
    });
    const decoded = decodeActionResult(Buffer.from(ActionResultType.encode(message).finish()));
    expect(decoded).toEqual({
      outputFiles: [{ path: 'a.txt', digest: { hash: HASH_A, sizeBytes: 5 }, isExecutable: false }],
      exitCode: 0,
      worker: '10.0.0.7',
      otherOutputs: 2,
    });
  });

  it.each([
    ['a truncated message', () => encodeActionResult(SAMPLE).subarray(0, 20)],
    ['a length past the end', () => Buffer.from([0x12, 0x7f, 0x0a])],
    ['a group wire type', () => Buffer.from([0x13])],
    ['field number 0', () => Buffer.from([0x00, 0x01])],
    ['an output file without a digest', () => new MessageWriter().message(2, new MessageWriter().string(1, 'a.txt').finish()).finish()],
  ])('decoder - %s is refused with WireFormatError', (_name, bytes) => {
    expect(() => decodeActionResult(bytes())).toThrow(WireFormatError);
  });

  it('wire reader - skips 32- and 64-bit fields it does not know', () => {
    const buf = Buffer.concat([Buffer.from([0x0d, 1, 2, 3, 4]), Buffer.from([0x11, 1, 2, 3, 4, 5, 6, 7, 8]), Buffer.from([0x18, 0x05])]);
    expect(readFields(buf).map((f) => [f.field, f.wire])).toEqual([
      [1, 5],
      [2, 1],
      [3, 0],
    ]);
  });
});
