import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { liveRun, outputPiece } from '../../../src/ui/data/massgen-live.ts';
import { tempProject, type TempProject } from '../../helpers/project.ts';

let project: TempProject | undefined;
afterEach(() => {
  project?.cleanup();
  project = undefined;
});

function attempt(): { p: TempProject; dir: string } {
  project = tempProject({});
  const dir = project.path('.massgen/massgen_logs/log_20260101_000000_000001/turn_1/attempt_2');
  mkdirSync(path.join(dir, 'agent_outputs'), { recursive: true });
  mkdirSync(project.path('.massgen/massgen_logs/log_20260101_000000_000001/turn_1/attempt_1'), { recursive: true });
  return { p: project, dir };
}

describe('MassGen live run', () => {
  it('massgen-live - the newest attempt of the newest turn: status, agents and output files (no symlink)', async () => {
    const { p, dir } = attempt();
    writeFileSync(
      path.join(dir, 'status.json'),
      JSON.stringify({
        coordination: { phase: 'enforcement', completion_percentage: 40 },
        agents: { a: { status: 'voted', error: null } },
      }),
    );
    writeFileSync(path.join(dir, 'agent_outputs', 'a.txt'), 'hello\n');
    symlinkSync(path.join(dir, 'agent_outputs', 'a.txt'), path.join(dir, 'agent_outputs', 'final_presentation_a_latest.txt'));
    const view = await liveRun(p.root, p.path('.massgen/massgen_logs/log_20260101_000000_000001'));
    expect(view).toMatchObject({
      turn: 1,
      attempt: 2,
      attemptDir: '.massgen/massgen_logs/log_20260101_000000_000001/turn_1/attempt_2',
      turnDir: '.massgen/massgen_logs/log_20260101_000000_000001/turn_1',
      status: { phase: 'enforcement', fraction: 0.4, complete: false, agents: [{ id: 'a', status: 'voted', error: null }] },
      outputs: [{ file: 'a.txt', bytes: 6 }],
    });
    expect(outputPiece(dir, 'final_presentation_a_latest.txt', 0)).toBeUndefined();
    expect(outputPiece(dir, '../status.json', 0)).toBeUndefined();
  });

  it('massgen-live - a half-written last line is held back while MassGen may still write it, then shown', () => {
    const { dir } = attempt();
    const file = path.join(dir, 'agent_outputs', 'a.txt');
    writeFileSync(file, 'line one\nline tw');
    const now = Date.now();
    const first = outputPiece(dir, 'a.txt', 0, now);
    expect(first).toMatchObject({ text: 'line one\n', next: 9, size: 16 });
    const settled = outputPiece(dir, 'a.txt', first?.next ?? 0, now + 5000);
    expect(settled).toMatchObject({ text: 'line tw', next: 16 });
    // A PEM key still being written is held back from its first line.
    writeFileSync(file, 'ok\n-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBg\n');
    expect(outputPiece(dir, 'a.txt', 0, Date.now())).toMatchObject({ text: 'ok\n', next: 3 });
  });
});
