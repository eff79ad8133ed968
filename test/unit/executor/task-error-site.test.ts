import { describe, expect, it } from 'vitest';
import { taskErrorSite } from '../../../src/engine/executor/task-error-site.ts';

const ROOT = '/home/me/project';
const TASK = '/home/me/project/tasks/boom.ts';

function thrown(...frames: string[]): Error {
  const error = new Error('boom');
  error.stack = ['Error: boom', ...frames.map((f) => `    at ${f}`)].join('\n');
  return error;
}

describe('taskErrorSite', () => {
  it('taskErrorSite - the first frame in the task file, by path, relative to the project', () => {
    const error = thrown(
      'helper (/home/me/project/node_modules/lib/index.js:3:9)',
      'Object.run (/home/me/project/tasks/boom.ts:9:14)',
      'run (/home/me/project/tasks/boom.ts:20:1)',
    );
    expect(taskErrorSite(error, TASK, ROOT)).toBe('tasks/boom.ts:9:14');
  });

  it('taskErrorSite - a frame given as a file URL counts too', () => {
    expect(taskErrorSite(thrown('file:///home/me/project/tasks/boom.ts:4:2'), TASK, ROOT)).toBe('tasks/boom.ts:4:2');
  });

  it("taskErrorSite - refinery's own task, outside the project, by its full path", () => {
    const own = '/opt/refinery/tasks/consensus.ts';
    expect(taskErrorSite(thrown(`run (${own}:7:3)`), own, ROOT)).toBe(`${own}:7:3`);
  });

  it('taskErrorSite - no frame in the file, a file that only starts with its name, or no stack: nothing', () => {
    expect(taskErrorSite(thrown('x (/home/me/project/tasks/other.ts:1:1)'), TASK, ROOT)).toBeUndefined();
    expect(taskErrorSite(thrown('x (/home/me/project/tasks/boom.ts.bak:1:1)'), TASK, ROOT)).toBeUndefined();
    expect(taskErrorSite('a string was thrown', TASK, ROOT)).toBeUndefined();
    expect(taskErrorSite(null, TASK, ROOT)).toBeUndefined();
  });
});
