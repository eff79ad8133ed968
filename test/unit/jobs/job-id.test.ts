import { describe, expect, it } from 'vitest';
import { InvalidJobIdError, assertJobId, isValidJobId, newJobId } from '../../../src/workflows/jobs/job-id.ts';
import { defaultTopicPrefix, recordFile, registryPaths } from '../../../src/workflows/jobs/paths.ts';

describe('job ids', () => {
  it('newJobId - 8 lowercase hex characters, like the seed', () => {
    for (let i = 0; i < 50; i += 1) expect(newJobId()).toMatch(/^[0-9a-f]{8}$/);
  });

  it('isValidJobId - rejects anything unsafe as a file name or a topic level', () => {
    for (const bad of ['', '../x', 'a/b', 'a+b', 'a#', '.hidden', 'a b', 'a\u0000b', 'x'.repeat(65), '-lead'])
      expect(isValidJobId(bad), bad).toBe(false);
    for (const good of ['abc12345', 'Job_1-2', 'x']) expect(isValidJobId(good), good).toBe(true);
  });

  it('assertJobId - the message names the id and the rule', () => {
    expect(() => assertJobId('../etc', '--job')).toThrow(InvalidJobIdError);
    expect(() => assertJobId('../etc', '--job')).toThrow(/--job '\.\.\/etc' is not valid: use 1-64 letters/);
  });

  it('recordFile - ids from outside never leave the registry directory', () => {
    const paths = registryPaths('/p');
    expect(recordFile(paths, 'abc12345')).toBe('/p/.mam/jobs/abc12345.json');
    expect(() => recordFile(paths, '../../etc/passwd')).toThrow(InvalidJobIdError);
    expect(defaultTopicPrefix('abc12345')).toBe('python/mqtt/jobs/abc12345');
    expect(paths.logsRoot).toBe('/p/.mam/delegate_job_logs');
  });
});
