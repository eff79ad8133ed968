// The JavaScript SHA-256 the no-op check keys its record by, against node:crypto's.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { sha256Hex } from '../../../src/engine/state/sha256-text.ts';
import { mulberry32 } from '../../../src/workflows/refine/seeded.ts';

const node = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

describe('sha256Hex', () => {
  it('sha256Hex - the FIPS 180-4 examples, the empty text and every length around a block boundary equal node:crypto', () => {
    expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(sha256Hex('abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq')).toBe(
      '248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1',
    );
    expect(sha256Hex('')).toBe(node(''));
    for (let length = 0; length < 300; length += 1) expect(sha256Hex('x'.repeat(length))).toBe(node('x'.repeat(length)));
  });

  it('sha256Hex - random texts, with multi-byte characters, equal node:crypto', () => {
    const random = mulberry32(7);
    const alphabet = ['a', 'Z', '/', '"', '\\', '\0', '\n', 'é', '中', '😀'];
    for (let i = 0; i < 500; i += 1) {
      const text = Array.from({ length: Math.floor(random() * 200) }, () => alphabet[Math.floor(random() * alphabet.length)]).join('');
      expect(sha256Hex(text)).toBe(node(text));
    }
  });
});
