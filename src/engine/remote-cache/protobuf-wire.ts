// The few pieces of the protobuf wire format an ActionResult needs: varints, tags and
// length-delimited fields, written in field order with proto3 defaults left out, and a reader that
// skips fields it does not know (servers may add some, as bazel-remote adds execution metadata).

const WIRE_VARINT = 0;
const WIRE_I64 = 1;
const WIRE_LEN = 2;
const WIRE_I32 = 5;

function varint(value: number | bigint): number[] {
  let v = BigInt.asUintN(64, BigInt(value));
  const out: number[] = [];
  while (v >= 0x80n) {
    out.push(Number(v & 0x7fn) | 0x80);
    v >>= 7n;
  }
  out.push(Number(v));
  return out;
}

/** Builds one message: call the field writers in ascending field order. */
export class MessageWriter {
  private readonly parts: Buffer[] = [];

  private tag(field: number, wire: number): void {
    this.parts.push(Buffer.from(varint((field << 3) | wire)));
  }

  /** An int32/int64/bool field; zero is the default and is not written. */
  varint(field: number, value: number | bigint | boolean): this {
    const n = typeof value === 'boolean' ? (value ? 1 : 0) : value;
    if (n === 0 || n === 0n) return this;
    this.tag(field, WIRE_VARINT);
    this.parts.push(Buffer.from(varint(n)));
    return this;
  }

  /** A bytes field (or an embedded message); empty is the default and is not written. */
  bytes(field: number, value: Uint8Array): this {
    if (value.length === 0) return this;
    return this.lengthDelimited(field, value);
  }

  string(field: number, value: string): this {
    return this.bytes(field, Buffer.from(value, 'utf8'));
  }

  /** An embedded message: written when present, even when it encodes to no bytes. */
  message(field: number, value: Uint8Array | undefined): this {
    if (value === undefined) return this;
    return this.lengthDelimited(field, value);
  }

  private lengthDelimited(field: number, value: Uint8Array): this {
    this.tag(field, WIRE_LEN);
    this.parts.push(Buffer.from(varint(value.length)), Buffer.from(value));
    return this;
  }

  finish(): Buffer {
    return Buffer.concat(this.parts);
  }
}

export class WireFormatError extends Error {}

export type WireField =
  | { field: number; wire: 0; value: bigint }
  | { field: number; wire: 2; value: Buffer }
  | { field: number; wire: 1 | 5; value: Buffer };

function readVarint(buf: Buffer, at: number): { value: bigint; next: number } {
  let value = 0n;
  let shift = 0n;
  for (let i = at; i < buf.length && i < at + 10; i++) {
    const byte = buf[i] as number;
    value |= BigInt(byte & 0x7f) << shift;
    if ((byte & 0x80) === 0) return { value: BigInt.asUintN(64, value), next: i + 1 };
    shift += 7n;
  }
  throw new WireFormatError(`truncated or overlong varint at byte ${at}`);
}

/** Every field of one message, in the order written; throws WireFormatError on a malformed message. */
export function readFields(buf: Buffer): WireField[] {
  const fields: WireField[] = [];
  let at = 0;
  while (at < buf.length) {
    const key = readVarint(buf, at);
    at = key.next;
    const field = Number(key.value >> 3n);
    const wire = Number(key.value & 7n);
    if (field === 0) throw new WireFormatError('field number 0');
    if (wire === WIRE_VARINT) {
      const v = readVarint(buf, at);
      at = v.next;
      fields.push({ field, wire, value: v.value });
    } else if (wire === WIRE_LEN) {
      const len = readVarint(buf, at);
      const start = len.next;
      const end = start + Number(len.value);
      if (len.value > BigInt(buf.length) || end > buf.length) throw new WireFormatError(`field ${field} runs past the end of the message`);
      fields.push({ field, wire, value: buf.subarray(start, end) });
      at = end;
    } else if (wire === WIRE_I64 || wire === WIRE_I32) {
      const end = at + (wire === WIRE_I64 ? 8 : 4);
      if (end > buf.length) throw new WireFormatError(`field ${field} runs past the end of the message`);
      fields.push({ field, wire, value: buf.subarray(at, end) });
      at = end;
    } else {
      // Groups (3, 4) are long deprecated and never used by REAPI.
      throw new WireFormatError(`unsupported wire type ${wire} for field ${field}`);
    }
  }
  return fields;
}

/** A varint field's value as a signed 64-bit number (int32 and int64 negatives take ten bytes). */
export function signed(value: bigint): bigint {
  return BigInt.asIntN(64, value);
}
