// Issue #32, item 3: every credential shape, in every encoding a log really holds (raw, JSON
// `\u`-escaped, URL-encoded, base64 of the line, cut across two lines), is gone after `redact`;
// and settings, hashes, paths and prose that only look similar stay as they are.
import { describe, expect, it } from 'vitest';
import { KEY_KINDS, mayHoldCredential, redact } from '../../../src/security/redact.ts';

const PEM_BODY = 'MC4CAQAwBQYDK2VwBCIEIGd1Vv0c0tQ7cR2kX9yq3Lw8sXbQ1Xn0Zz5m0Jd2QF6H';
const PRIVATE_VALUE = 'qP4v-Uq9z-Lm2x-Wc7n';

/** A line that holds the secret, and a piece of the secret that must not survive in any form. */
const SHAPES: Record<string, { line: string; core: string }> = {
  openai: { line: 'export OPENAI_API_KEY=sk-proj-Ab12Cd34Ef56Gh78Ij90Kl12Mn34', core: 'Cd34Ef56Gh78' },
  anthropic: { line: 'x-api-key sk-ant-api03-Zy98Xw76Vu54Ts32Rq10-PoNm', core: 'Vu54Ts32Rq10' },
  aws_id: { line: 'aws_access_key_id = AKIAIOSFODNN7EXAMPLE', core: 'IOSFODNN7EXA' },
  aws_secret: { line: 'AKIAIOSFODNN7EXAMPLE wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY', core: 'K7MDENG/bPxR' },
  github: { line: `pushed with ghp_${'a1B2c3D4'.repeat(4)}wxyz`, core: 'c3D4a1B2c3D4' },
  github_pat: { line: `GH=github_pat_11ABCDEFG0${'xY9'.repeat(10)}`, core: 'xY9xY9xY9xY9' },
  google: { line: 'maps key AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q', core: 'E5f6G7h8I9j0' },
  slack: { line: 'slack xoxb-1234567890-0987654321-AbCdEfGhIjKlMnOp', core: '0987654321-AbC' },
  jwt: {
    line: 'session eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U',
    core: 'dozjgNryP4J3',
  },
  pem: { line: `-----BEGIN PRIVATE KEY-----\n${PEM_BODY}\n-----END PRIVATE KEY-----`, core: 'Vv0c0tQ7cR2k' },
  assignment: { line: 'DB_PASSWORD="Tr0ub4dor-and-3"', core: 'Tr0ub4dor-an' },
  json_field: { line: '{"auth_token": "Xy9_abcDEF1234567890abcdefGHIJKLmnopqrstu12"}', core: '1234567890ab' },
};

const ENCODINGS: Record<string, (line: string) => string> = {
  raw: (line) => line,
  json_u: (line) => [...line].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join(''),
  json_u_punctuation: (line) => JSON.stringify(line).replace(/[-_/]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`),
  url: (line) => encodeURIComponent(line).replace(/[-_.!~*'()]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`),
  base64: (line) => `payload ${Buffer.from(line).toString('base64')} end`,
  base64url: (line) => Buffer.from(line).toString('base64url'),
  // A terminal or a wrapping logger cuts the line in the middle of the secret.
  split: (line) => {
    const at = line.length - 14;
    return `${line.slice(0, at)}\n${line.slice(at)}`;
  },
};

/** Every way a reader could get the core back from the redacted text. */
function reveals(text: string, core: string): boolean {
  const views = [
    text,
    text.replace(/\r?\n[ \t]*/g, ''),
    text.replace(/\\u([0-9a-fA-F]{4})/g, (_m, h: string) => String.fromCharCode(parseInt(h, 16))),
    (() => {
      try {
        return decodeURIComponent(text);
      } catch {
        return text;
      }
    })(),
    ...[...text.matchAll(/[A-Za-z0-9+/_-]{8,}={0,2}/g)].map((m) => Buffer.from(m[0], 'base64').toString('latin1')),
  ];
  return views.some((v) => v.includes(core));
}

describe('redact - shapes and encodings', () => {
  for (const [shape, { line, core }] of Object.entries(SHAPES)) {
    for (const [encoding, encode] of Object.entries(ENCODINGS)) {
      // A PEM block and an assignment span lines of their own: cutting them is a different text.
      if (encoding === 'split' && (shape === 'pem' || shape === 'assignment' || shape === 'json_field')) continue;
      it(`redact - ${shape} ${encoding}`, () => {
        const text = encode(line);
        expect(reveals(text, core), 'the sample must carry its secret').toBe(true);
        const out = redact(`before ${text} after`, { kinds: KEY_KINDS });
        expect(reveals(out.text, core), out.text).toBe(false);
        expect(out.total).toBeGreaterThan(0);
        // The cheap test that lets clean events skip the redactor must not skip this one.
        expect(mayHoldCredential(`before ${text} after`, [])).toBe(true);
        expect(out.text).toMatch(/^before .*after$/s);
      });
    }
  }

  it('redact - a known secret value, line by line: a PEM key reaches a log one line at a time', () => {
    const pem = `-----BEGIN PRIVATE KEY-----\n${PEM_BODY}\n-----END PRIVATE KEY-----\n`;
    const out = redact(`stage printed ${PEM_BODY}`, { secrets: [pem] });
    expect(out.text).toBe('stage printed [redacted:secret_value]');
    // Armor lines are not secret: "-----END PRIVATE KEY-----" alone is left as it is.
    expect(redact('-----END PRIVATE KEY-----', { secrets: [pem] }).total).toBe(0);
  });

  it('redact - a known secret value in every encoding', () => {
    for (const [encoding, encode] of Object.entries(ENCODINGS)) {
      const out = redact(`v ${encode(`MY_PRIVATE_KEY=${PRIVATE_VALUE}`)} w`, { secrets: [PRIVATE_VALUE] });
      expect(reveals(out.text, PRIVATE_VALUE.slice(3, 15)), `${encoding}: ${out.text}`).toBe(false);
    }
  });

  it('redact - settings, hashes, paths and prose that only look like secrets stay', () => {
    const clean = [
      'tokenizer: cl100k_base; max_tokens: 4096; prompt_tokens=1200',
      'api_key_env: OPENAI_API_KEY, signing_key_env: REFINERY_CACHE_SIGNING_KEY',
      'cache_key: 3f2a9bc0d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8',
      'verify_key: keys/cache.pub; password: required; token: ${TOKEN}; secret=<your secret>',
      '.refinery/sessions/example/round_001/judges/model_a/verdict.json',
      'sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU= integrity',
      'Bearer authentication uses tokens; task-list, desk-chair, sk-short, ask-me-anything-about-this',
      'a 100% sure result, 50%-off, %zz and \\u00e9t\\u00e9',
      'line one ends here\nline two starts here',
    ];
    for (const text of clean) expect(redact(text).text, text).toBe(text);
  });
});
