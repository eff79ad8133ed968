import type { AuditLine, AuditStatus, JobExtras, JobRecord } from './types.ts';

/** `refinery jobs list`: one row per job, oldest first. */
export function formatJobTable(rows: { record: JobRecord; extras: JobExtras; status?: AuditStatus }[]): string {
  const header = ['JOB', 'STATUS', 'TYPE', 'ITER', 'SEQ', 'AGENT', 'UPDATED', 'RESULT'];
  const body = rows.map(({ record, extras, status }) => [
    record.job_id,
    record.status,
    extras.job_type,
    `${extras.iteration}/${extras.max_iterations}`,
    String(record.last_seq),
    record.agent,
    record.updated_at,
    resultText(status),
  ]);
  return table([header, ...body]);
}

/** `refinery jobs logs ID`: the event timeline, one line per audit entry. */
export function formatTimeline(lines: AuditLine[]): string {
  return lines
    .map((line) => {
      const seq = line.seq !== undefined ? `seq=${line.seq}` : 'seq=-';
      const when = line.received_at ?? line.timestamp;
      const origin = line.source === 'mqtt' ? 'mqtt' : 'local';
      return `${when} ${origin.padEnd(5)} ${seq.padEnd(7)} ${line.event.padEnd(20)} ${line.detail ?? ''}`.trimEnd();
    })
    .join('\n');
}

function resultText(status: AuditStatus | undefined): string {
  if (!status?.outcome) return '-';
  const validation = status.validation ? ` validation=${status.validation}` : '';
  return `${status.outcome}${validation}`;
}

function table(rows: string[][]): string {
  const widths = rows[0]?.map((_, column) => Math.max(...rows.map((row) => (row[column] ?? '').length))) ?? [];
  return rows
    .map((row) =>
      row
        .map((cell, column) => cell.padEnd(widths[column] ?? 0))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}
