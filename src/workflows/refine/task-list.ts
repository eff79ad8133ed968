import type { NextTasksArtifact } from './next-tasks.ts';

/** A next task as the summary lists it. */
export interface TaskLine {
  id: string;
  description: string;
  priority?: string | number;
  relates_to?: string[];
}

export function taskLines(next: NextTasksArtifact | undefined): TaskLine[] {
  if (next?.status !== 'ok') return [];
  return next.tasks.map((t) => ({
    id: t.id,
    description: t.description,
    ...(t.priority !== undefined ? { priority: t.priority } : {}),
    ...(t.metadata?.relates_to?.length ? { relates_to: [...t.metadata.relates_to] } : {}),
  }));
}

/** Text cut to `max` characters on one line, with an ellipsis when cut. */
export function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= max ? flat : `${flat.slice(0, Math.max(1, max - 1)).trimEnd()}…`;
}

/** `next: T1 Fix the flag name; T2 ...` for a stage line; empty when there is nothing to do. */
export function nextTasksLine(lines: readonly TaskLine[], perTask = 48): string {
  if (lines.length === 0) return '';
  return `next: ${lines.map((t) => `${t.id} ${oneLine(t.description, perTask)}`).join('; ')}`;
}
