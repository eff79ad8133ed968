import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { RunEvent, StageEndEvent } from '../types/events.ts';
import type { EventSink } from './bus.ts';
import { writeFileAtomicSync } from '../state/atomic-file.ts';
import { writeProblem, type WriteProblem } from '../state/write-problem.ts';

function xml(text: string): string {
  return text
    .replace(/[<>&"']/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&apos;' })[c] as string)
    .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/g, '');
}

function testcase(pipeline: string, e: StageEndEvent): string {
  const head = `    <testcase classname="${xml(pipeline)}" name="${xml(e.stage)}" time="${(e.durationMs / 1000).toFixed(3)}"`;
  if (e.status === 'failed') {
    const detail = [
      e.reason ?? '',
      ...(e.issues ?? []).map((i) => `${i.path}${i.pointer ? ` ${i.pointer}` : ''}: ${i.message}`),
      e.rejectedDir ? `rejected artifact: ${e.rejectedDir}` : '',
    ]
      .filter(Boolean)
      .join('\n');
    const kind = e.issues?.length ? 'invalid-artifact' : 'stage-failed';
    return `${head}>\n      <failure type="${kind}" message="${xml(e.reason ?? 'failed')}">${xml(detail)}</failure>\n    </testcase>`;
  }
  if (e.status === 'skipped' || e.status === 'blocked' || e.status === 'aborted')
    return `${head}>\n      <skipped message="${xml(`${e.status}: ${e.reason ?? ''}`)}"/>\n    </testcase>`;
  return `${head}>\n      <system-out>${xml(e.status === 'fresh' ? 'up to date' : (e.summary ?? 'succeeded'))}</system-out>\n    </testcase>`;
}

export interface JunitSink {
  sink: EventSink;
  /** Why the report could not be written (a full disk, a folder that is a file), once the run ended. */
  problem(): WriteProblem | undefined;
}

/** Writes the run as JUnit XML (a test case per stage) when the run ends: whole or not at all. */
export function junitSink(file: string): JunitSink {
  const ends: StageEndEvent[] = [];
  let problem: WriteProblem | undefined;
  const sink = (event: RunEvent): void => {
    if (event.type === 'stage-end') ends.push(event);
    if (event.type !== 'run-end') return;
    const failures = ends.filter((e) => e.status === 'failed').length;
    const skipped = ends.filter((e) => e.status === 'skipped' || e.status === 'blocked' || e.status === 'aborted').length;
    const body = [...ends]
      .sort((a, b) => (a.stage < b.stage ? -1 : 1))
      .map((e) => testcase(event.pipeline, e))
      .join('\n');
    const out = `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="refinery" tests="${ends.length}" failures="${failures}" time="${(event.durationMs / 1000).toFixed(3)}">\n  <testsuite name="${xml(event.pipeline)}" tests="${ends.length}" failures="${failures}" skipped="${skipped}" timestamp="${event.time}" time="${(event.durationMs / 1000).toFixed(3)}">\n${body}\n  </testsuite>\n</testsuites>\n`;
    try {
      mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
      writeFileAtomicSync(file, out);
    } catch (error) {
      problem = writeProblem(path.resolve(file), error);
    }
  };
  return { sink, problem: () => problem };
}
