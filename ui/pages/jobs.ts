/// <reference lib="dom" />
// Delegated jobs: the registries' records (tokens redacted by the server) with status and elapsed
// time, and one job's event timeline, both refreshed as their files change.
import { getJson, qs } from '../api.ts';
import type { App, View } from '../app.ts';
import { throttle } from '../app.ts';
import { chip, empty, errorBox, h, link, ms, replace, route, section, table, when } from '../dom.ts';

interface JobRow {
  registry: string;
  job_id: string;
  status: string;
  created_at: string;
  updated_at: string;
  agent: string;
  prompt: string;
  job_type: string;
  agent_kind: string;
  elapsedMs: number | null;
}

const STATUS_STATE: Record<string, string> = {
  pending: 'never-run',
  running: 'running',
  completed: 'up-to-date',
  error: 'failed',
  cancelled: 'skipped',
};

export function jobsView(_app: App): View {
  const box = h('div', null, empty('Loading jobs…'));
  const el = h('div', { class: 'page' }, h('h1', null, 'Jobs'), box);
  const load = async (): Promise<void> => {
    const { jobs, problems } = await getJson<{ jobs: JobRow[]; problems: string[] }>('/api/jobs');
    replace(
      box,
      problems.length
        ? h(
            'ul',
            { class: 'warnings' },
            problems.map((p) => h('li', null, p)),
          )
        : null,
      jobs.length
        ? table(
            ['job', 'status', 'agent', 'type', 'created', 'elapsed', 'registry', 'prompt'],
            jobs.map((j) => [
              link(route('jobs', j.registry, j.job_id), j.job_id),
              chip(STATUS_STATE[j.status] ?? 'stale', j.status),
              `${j.agent} (${j.agent_kind})`,
              j.job_type,
              when(j.created_at),
              ms(j.elapsedMs),
              j.registry,
              h('span', { class: 'prompt' }, j.prompt.length > 120 ? `${j.prompt.slice(0, 117)}…` : j.prompt),
            ]),
          )
        : empty('No delegated jobs (refinery jobs submit, or the delegate task, registers them in .mam/jobs).'),
    );
  };
  void load().catch((e: Error) => replace(box, errorBox(e.message)));
  const refresh = throttle(() => void load().catch(() => undefined), 500);
  return { el, title: 'Jobs', onLive: (m) => m.kind === 'changed' && m.topic === 'jobs' && refresh(), reload: () => void load() };
}

interface JobDetail {
  registry: string;
  record: JobRow & {
    timeout_sec: number;
    idle_timeout_sec: number;
    expected_artifacts: string[];
    topic_prefix: string;
    agent_session: string;
    last_seq: number;
  };
  extras: Record<string, unknown>;
  status: Record<string, unknown> | null;
  timeline: Array<{ event: string; timestamp: string; source: string; seq?: number; detail?: string; data?: Record<string, unknown> }>;
  timelineTotal: number;
  problems: string[];
}

export function jobView(_app: App, registry: string, id: string): View {
  const body = h('div', null, empty('Loading…'));
  const el = h('div', { class: 'page' }, h('p', { class: 'crumbs' }, link('#/jobs', 'jobs'), ` / ${registry}`), h('h1', null, id), body);
  const load = async (): Promise<void> => {
    const d = await getJson<JobDetail>(`/api/jobs/job${qs({ registry, id })}`);
    const r = d.record;
    replace(
      body,
      h(
        'p',
        null,
        chip(STATUS_STATE[r.status] ?? 'stale', r.status),
        ` ${r.agent} · ${String(d.extras.job_type ?? '')} · created ${when(r.created_at)} · updated ${when(r.updated_at)}`,
      ),
      section('Prompt', h('pre', { class: 'code' }, r.prompt)),
      section(
        'Timeline',
        d.timeline.length
          ? table(
              ['time', 'event', 'source', 'seq', 'detail'],
              d.timeline.map((t) => [
                t.timestamp,
                t.event,
                t.source,
                t.seq === undefined ? '' : String(t.seq),
                t.detail ?? (t.data ? JSON.stringify(t.data) : ''),
              ]),
              { class: 'grid timeline' },
            )
          : empty('No events yet.'),
        d.timelineTotal > d.timeline.length
          ? h('p', { class: 'muted small' }, `the last ${d.timeline.length} of ${d.timelineTotal} events`)
          : null,
      ),
      section('Record', h('pre', { class: 'code' }, JSON.stringify(r, null, 2))),
      d.problems.length
        ? section(
            'Problems',
            h(
              'ul',
              null,
              d.problems.map((p) => h('li', null, p)),
            ),
          )
        : null,
    );
  };
  void load().catch((e: Error) => replace(body, errorBox(e.message)));
  const refresh = throttle(() => void load().catch(() => undefined), 300);
  return { el, title: id, onLive: (m) => m.kind === 'changed' && m.topic === 'jobs' && refresh(), reload: () => void load() };
}
