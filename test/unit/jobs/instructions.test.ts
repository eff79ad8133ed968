import { describe, expect, it } from 'vitest';
import { buildInstructions, isApproval, shellQuote } from '../../../src/workflows/jobs/instructions.ts';

describe('agent instructions', () => {
  const text = buildInstructions({
    jobId: 'abc12345',
    publisherArgv: [
      '/usr/bin/node',
      '/opt/refinery/bin/refinery.js',
      '-C',
      "/work/it's here",
      'jobs',
      'publish',
      '--registry-dir',
      '/work/.mam/jobs',
    ],
    prompt: 'sort the problems',
    idleTimeoutSec: 120,
    expectedArtifacts: ['sort_problems.md'],
    role: 'worker',
    type: 'direct',
  });

  it('buildInstructions - starts with the job id and gives the exact quoted publish command per event', () => {
    expect(text.split('\n')[0]).toContain('Your job_id is "abc12345"');
    expect(text).toContain(
      "On success run: /usr/bin/node /opt/refinery/bin/refinery.js -C '/work/it'\\''s here' jobs publish --registry-dir /work/.mam/jobs --job abc12345 --event completed",
    );
    for (const event of ['started', 'permission_required', 'progress', 'error']) expect(text).toContain(`--job abc12345 --event ${event}`);
    expect(text).toContain('at least every 60 s');
    expect(text).toContain('- sort_problems.md');
    expect(text.trimEnd().endsWith('Task: sort the problems')).toBe(true);
  });

  it('shellQuote - leaves plain words alone and single-quotes the rest', () => {
    expect(shellQuote('abc-1/x.y')).toBe('abc-1/x.y');
    expect(shellQuote('a b')).toBe("'a b'");
    expect(shellQuote('$(rm -rf /)')).toBe("'$(rm -rf /)'");
  });

  it('isApproval - PASS/AGREE must lead the verdict; "do not agree" or "bypass" is not approval', () => {
    expect(isApproval('loop', 'PASS')).toBe(true);
    expect(isApproval('loop', 'pass - all good')).toBe(true);
    expect(isApproval('loop', 'The bypass is wrong')).toBe(false);
    expect(isApproval('loop', 'PASSWORD leaked')).toBe(false);
    expect(isApproval('discuss', 'AGREE with the plan')).toBe(true);
    expect(isApproval('discuss', 'I do not agree')).toBe(false);
  });
});
