import { describe, expect, it } from 'vitest';
import { ALL_KINDS, KEY_KINDS, mayHoldCredential, redact, redactDeep } from '../../../src/security/redact.ts';

const SK = 'sk-proj-Ab12Cd34Ef56Gh78Ij90';
const GOOGLE = 'AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q';
const GITHUB = `ghp_${'a1B2'.repeat(9)}`;
const SLACK = 'xoxb-1234567890-abcdefghij';

describe('redact', () => {
  it('redact - each credential shape is replaced and counted by kind', () => {
    const text = `openai ${SK}; google=${GOOGLE}; gh "${GITHUB}"; slack ${SLACK}; Authorization: Bearer eyJhbGciOi.JIUzI1NiJ9.x9`;
    const out = redact(text);
    for (const secret of [SK, GOOGLE, GITHUB, SLACK, 'eyJhbGciOi']) expect(out.text).not.toContain(secret);
    expect(out.text).toContain('Authorization: Bearer [redacted:bearer_token]');
    expect(out.counts).toMatchObject({ sk_key: 1, google_api_key: 1, github_token: 1, slack_token: 1, bearer_token: 1, email: 0 });
    expect(out.total).toBe(5);
  });

  it('redact - configured secret values of any shape, longest first, counted as secret_value', () => {
    const out = redact('k1=plainvalue1234 k2=plainvalue1234extra again plainvalue1234', {
      secrets: ['plainvalue1234', 'plainvalue1234extra'],
    });
    expect(out.text).toBe('k1=[redacted:secret_value] k2=[redacted:secret_value] again [redacted:secret_value]');
    expect(out.counts.secret_value).toBe(3);
  });

  it('redact - secret values shorter than 8 characters are not searched (they would hit ordinary words)', () => {
    expect(redact('the test passed', { secrets: ['test', ''] }).text).toBe('the test passed');
  });

  it('redact - prose and look-alikes are left alone', () => {
    const text =
      'Bearer authentication uses tokens; task-list, desk-chair, sk-short, ask-me-anything-about-this, user@example.com /home/alice/x';
    const out = redact(text);
    expect(out).toEqual({ text, counts: expect.objectContaining({ sk_key: 0, bearer_token: 0 }), total: 0 });
    expect(out.text).toBe(text);
  });

  it('redact - e-mail addresses and home folders only when asked for (bundle export)', () => {
    const text = 'by alice.smith+x@mail.example.org in /home/alice/proj and /Users/bob/x and C:\\Users\\carol\\y and /srv/me/z';
    const out = redact(text, { kinds: ALL_KINDS, homeDirs: ['/srv/me'] });
    expect(out.text).toBe('by [redacted:email] in ~/proj and ~/x and ~\\y and ~/z');
    expect(out.counts).toMatchObject({ email: 1, home_path: 4 });
    expect(redact(text).total).toBe(0);
  });

  it('mayHoldCredential - never false for a text redact would change (it gates every event)', () => {
    const samples = [
      SK,
      GOOGLE,
      GITHUB,
      SLACK,
      `github_pat_${'x1'.repeat(20)}`,
      'Bearer abcdefgh1',
      'BEARER ABCDEFGH1',
      'bearer Abcdefgh',
      'v=plainvalue1234',
    ];
    for (const sample of samples) {
      const text = `before ${sample} after`;
      const changed = redact(text, { secrets: ['plainvalue1234'], kinds: KEY_KINDS }).total > 0;
      expect(changed, sample).toBe(true);
      expect(mayHoldCredential(text, ['plainvalue1234']), sample).toBe(true);
    }
    expect(mayHoldCredential('stage copied 3 lines to out/a.txt', ['plainvalue1234'])).toBe(false);
  });

  it('redact - a given home folder is matched as a whole folder name, with or without a trailing slash', () => {
    const out = redact('/srv/me/a /srv/me2/b "/srv/me" /srv/me', { kinds: ['home_path'], homeDirs: ['/srv/me/'] });
    expect(out.text).toBe('~/a /srv/me2/b "~" ~');
    expect(out.counts.home_path).toBe(3);
  });

  it('redactDeep - strings inside objects and arrays; the same object back when nothing changed', () => {
    const clean = { a: 'x', b: [1, 'y', { c: null }] };
    const strip = (s: string) => redact(s).text;
    expect(redactDeep(clean, strip)).toBe(clean);
    const dirty = { a: 'x', b: [1, `key ${SK}`, { c: SK }] };
    const out = redactDeep(dirty, strip);
    expect(out).toEqual({ a: 'x', b: [1, 'key [redacted:sk_key]', { c: '[redacted:sk_key]' }] });
    expect(dirty.b[1]).toBe(`key ${SK}`);
  });
});
