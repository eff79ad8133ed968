// The Python signing snippet of docs/jobs-signing.md, run as written against refinery's verifier.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { decodePayload } from '../../../src/workflows/jobs/event-payload.ts';
import { REPO_ROOT } from '../../helpers/project.ts';
import { skipWithout, systemTool, toolPath } from '../../helpers/system-tools.ts';

const PYTHON = systemTool('python3');
const TOKEN = 's3cr3t-tøken';
const JOB = 'abc12345';

/** The first ```python block of the doc: the snippet a publisher copies. */
function docSnippet(): string {
  const doc = readFileSync(path.join(REPO_ROOT, 'docs', 'jobs-signing.md'), 'utf8');
  const block = /```python\n([\s\S]*?)```/.exec(doc)?.[1];
  if (!block) throw new Error('docs/jobs-signing.md has no ```python block');
  return block;
}

/** Reads `data` as JSON text (so 50.0 stays a float and big integers stay exact in Python), signs, prints the payload. */
const HARNESS = `
import sys
data = json.loads(sys.argv[2])
signed = sign_event(sys.argv[1], "${JOB}", 3, "completed", "2026-06-19T09:32:00Z", "done", data)
print(json.dumps({"schema_version": 1, "seq": 3, "job_id": "${JOB}", "event": "completed",
                  "timestamp": "2026-06-19T09:32:00Z", "detail": "done", "data": signed}))
`;

function pythonSigns(dataJson: string): { code: number | null; stdout: string; stderr: string } {
  const result = spawnSync(toolPath(PYTHON), ['-c', `${docSnippet()}\n${HARNESS}`, TOKEN, dataJson], { encoding: 'utf8' });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe.skipIf(skipWithout(PYTHON))('docs/jobs-signing.md Python snippet', () => {
  it.each([
    ['a float written with .0', '{"pct": 50.0, "ratio": 0.1, "tiny": 1e-7, "neg": -2.5e-10}'],
    [
      'keys outside the BMP (UTF-16 order, not code point order)',
      '{"😀": 1, "ｚ": 2, "nested": {"\\ud83d\\ude00x": [true, null], "\\uff5a": "é ✓ \\"q\\"\\n"}}',
    ],
    ['the largest exact integer', '{"n": 9007199254740991, "m": -9007199254740991}'],
  ])('python signs, refinery verifies - %s', (_name, dataJson) => {
    const python = pythonSigns(dataJson);
    expect(python.stderr).toBe('');
    expect(python.code).toBe(0);
    const decoded = decodePayload(python.stdout.trim(), JOB, TOKEN);
    expect(decoded).toMatchObject({ ok: true, payload: { seq: 3, event: 'completed' } });
    // And the token matters: the same payload does not verify under another job's token.
    expect(decodePayload(python.stdout.trim(), JOB, 'another-token')).toMatchObject({ ok: false, reason: 'bad_token' });
  });

  it('python refuses an integer beyond 2^53 with the fix; refinery names such an event unverifiable, not forged', () => {
    const python = pythonSigns('{"rows": 12345678901234567890}');
    expect(python.code).not.toBe(0);
    expect(python.stderr).toContain('ValueError: 12345678901234567890 is beyond +-2^53: send it as a string');
    // A publisher that signs it anyway (here: the snippet given the string, the number swapped in after).
    const asString = pythonSigns('{"rows": "12345678901234567890"}');
    expect(asString.code).toBe(0);
    expect(decodePayload(asString.stdout.trim(), JOB, TOKEN)).toMatchObject({ ok: true });
    const swapped = asString.stdout.trim().replace('"rows": "12345678901234567890"', '"rows": 12345678901234567890');
    expect(decodePayload(swapped, JOB, TOKEN)).toEqual({
      ok: false,
      reason: 'unverifiable',
      seq: 3,
      event: 'completed',
      message:
        'data.rows: the number 12345678901234567000 is beyond ±2^53 (9007199254740991), where a JSON number is no longer exact, so its signature cannot be checked; send it as a string',
    });
  });
});
