// The dashboard's JSON API: every list is paged on the server; everything is read from the
// project's own files (runs, journal, MassGen logs, refine sessions, job registries).
import type { IncomingMessage, ServerResponse } from 'node:http';
import path from 'node:path';
import type { LiveHub } from './live-hub.ts';
import type { RunStore } from './data/runs.ts';
import { isRunId } from './data/runs.ts';
import type { PipelineStore } from './data/pipelines.ts';
import { isPipelineName } from './data/pipelines.ts';
import type { MassGenStore, SessionSort } from './data/massgen.ts';
import type { RefineStore } from './data/refine.ts';
import type { JobStore } from './data/jobs.ts';
import type { ExperimentStore } from './data/experiments.ts';
import { liveRun, outputPiece } from './data/massgen-live.ts';
import { stageHistory } from './data/stage-history.ts';
import type { ActionRunner } from './actions.ts';
import { HttpError, intParam, readJsonBody, sendJson, stringParam } from './http-reply.ts';
import { relativeInProject } from './safe-path.ts';

export interface ApiContext {
  root: string;
  hub: LiveHub;
  runs: RunStore;
  pipelines: PipelineStore;
  massgen: MassGenStore;
  experiments: ExperimentStore;
  refine: RefineStore;
  jobs: JobStore;
  /** Undefined: read-only (no --allow-actions). */
  actions: ActionRunner | undefined;
  mode: 'standalone' | 'watch';
}

type Handler = (ctx: ApiContext, url: URL, params: string[], req: IncomingMessage) => Promise<unknown>;

const MAX_GRAPH_NODES = 150;
/** Longest search text: matching is linear in it, and no session name, question or winner needs more. */
export const MAX_SEARCH_CHARS = 200;
const SORTS: readonly SessionSort[] = ['time', 'cost', 'duration', 'retries', 'turns'];

function notFound(what: string): never {
  throw new HttpError(404, `${what} not found`);
}

function pipelineParam(name: string | undefined): string {
  const decoded = decodeURIComponent(name ?? '');
  if (!isPipelineName(decoded)) notFound(`pipeline '${decoded}'`);
  return decoded;
}

function searchParam(url: URL): string {
  const q = url.searchParams.get('q') ?? '';
  if (q.length > MAX_SEARCH_CHARS)
    throw new HttpError(
      400,
      `q: the search text is ${q.length} characters; at most ${MAX_SEARCH_CHARS} are allowed (plain text, any case)`,
    );
  return q;
}

const GET_ROUTES: Array<[RegExp, Handler]> = [
  [
    /^\/api\/overview$/,
    async (ctx) => ({
      project: path.basename(ctx.root),
      mode: ctx.mode,
      actions: ctx.actions !== undefined,
      seq: ctx.hub.seq,
      pipelines: ctx.pipelines.names(),
      logsDirs: ctx.massgen.logsDirs.map((d) => relativeInProject(ctx.root, d)),
    }),
  ],
  [
    /^\/api\/pipelines$/,
    async (ctx) => ({
      pipelines: (await Promise.all(ctx.pipelines.names().map((n) => ctx.pipelines.summary(n)))).filter((p) => p !== undefined),
    }),
  ],
  [
    /^\/api\/pipelines\/([^/]+)$/,
    async (ctx, url, [name]) => {
      const pipeline = pipelineParam(name);
      const result = await ctx.pipelines.graph(pipeline, intParam(url, 'maxNodes', MAX_GRAPH_NODES, 10, 2000));
      if (!result) notFound(`pipeline '${pipeline}'`);
      return result;
    },
  ],
  [
    /^\/api\/pipelines\/([^/]+)\/stages$/,
    async (ctx, url, [name]) => {
      const pipeline = pipelineParam(name);
      const rows = await ctx.pipelines.stageRows(
        pipeline,
        stringParam(url, 'select'),
        intParam(url, 'offset', 0, 0, 1e9),
        intParam(url, 'limit', 100, 1, 1000),
      );
      if (!rows) notFound(`pipeline '${pipeline}'`);
      return rows;
    },
  ],
  [
    /^\/api\/pipelines\/([^/]+)\/stage$/,
    async (ctx, url, [name]) => {
      const pipeline = pipelineParam(name);
      const id = stringParam(url, 'id', 4096);
      // The same answer as `refinery why`: ask for it when none is fresh (a few seconds old at most).
      if (url.searchParams.get('why') === '1') await ctx.pipelines.assessor.request(pipeline, 5000);
      const stage = await ctx.pipelines.stage(pipeline, id);
      if (!stage) notFound(`stage '${id}' of pipeline '${pipeline}'`);
      return { ...stage, history: await stageHistory(ctx.runs, pipeline, id) };
    },
  ],
  [
    /^\/api\/pipelines\/([^/]+)\/assess$/,
    async (ctx, url, [name]) => {
      const pipeline = pipelineParam(name);
      const outcome = await ctx.pipelines.assessor.request(pipeline, intParam(url, 'maxAgeMs', 3000, 0, 3_600_000));
      return outcome.ok ? { ok: true, at: new Date(outcome.assessment.at).toISOString() } : { ok: false, error: outcome.error };
    },
  ],
  [
    /^\/api\/runs$/,
    async (ctx, url) =>
      ctx.runs.list({
        pipeline: stringParam(url, 'pipeline', 128) || undefined,
        status: stringParam(url, 'status', 32) || undefined,
        offset: intParam(url, 'offset', 0, 0, 1e9),
        limit: intParam(url, 'limit', 50, 1, 500),
      }) as unknown,
  ],
  [
    /^\/api\/runs\/([^/]+)$/,
    async (ctx, url, [id]) => {
      if (!id || !isRunId(id)) notFound('run');
      const detail = await ctx.runs.detail(id);
      if (!detail) notFound(`run ${id}`);
      const offset = intParam(url, 'offset', 0, 0, 1e9);
      const limit = intParam(url, 'limit', 500, 1, 5000);
      return { ...detail, totalStages: detail.stages.length, stages: detail.stages.slice(offset, offset + limit) };
    },
  ],
  [
    /^\/api\/runs\/([^/]+)\/logs$/,
    async (ctx, url, [id]) => {
      if (!id || !isRunId(id)) notFound('run');
      return ctx.runs.logs(id, stringParam(url, 'stage', 4096), intParam(url, 'tail', 200, 1, 5000));
    },
  ],
  [
    /^\/api\/massgen\/sessions$/,
    async (ctx, url) => {
      const sort = stringParam(url, 'sort', 16) || 'time';
      if (!SORTS.includes(sort as SessionSort)) throw new HttpError(400, `sort=${sort}: one of ${SORTS.join(', ')}`);
      const analyzed = stringParam(url, 'analyzed', 3);
      return ctx.massgen.sessions({
        offset: intParam(url, 'offset', 0, 0, 1e9),
        limit: intParam(url, 'limit', 50, 1, 500),
        sort: sort as SessionSort,
        descending: url.searchParams.get('order') !== 'asc',
        search: searchParam(url),
        state: stringParam(url, 'state', 32),
        analyzed: analyzed === 'yes' || analyzed === 'no' ? analyzed : '',
      });
    },
  ],
  [
    /^\/api\/massgen\/turn$/,
    async (ctx, url) => {
      const dir = stringParam(url, 'dir', 4096);
      const turn = await ctx.massgen.turn(dir);
      if (!turn) notFound(`MassGen turn '${dir}'`);
      return turn;
    },
  ],
  [/^\/api\/massgen\/charts$/, async (ctx) => ({ points: await ctx.massgen.chartPoints() })],
  [/^\/api\/massgen\/experiments$/, async (ctx) => ({ grids: await ctx.experiments.grids() })],
  [
    /^\/api\/massgen\/live$/,
    async (ctx, url) => {
      const dir = stringParam(url, 'dir', 4096);
      const abs = ctx.massgen.locate(dir);
      if (!abs) notFound(`MassGen run '${dir}'`);
      return liveRun(ctx.root, abs);
    },
  ],
  [
    /^\/api\/massgen\/live\/output$/,
    async (ctx, url) => {
      const dir = stringParam(url, 'dir', 4096);
      const file = stringParam(url, 'file', 256);
      const abs = ctx.massgen.locate(dir);
      const piece = abs ? outputPiece(abs, file, intParam(url, 'offset', 0, 0, Number.MAX_SAFE_INTEGER)) : undefined;
      if (!piece) notFound(`agent output '${file}' of '${dir}'`);
      return piece;
    },
  ],
  [/^\/api\/refine\/sessions$/, async (ctx) => ({ sessions: await ctx.refine.list() })],
  [
    /^\/api\/refine\/sessions\/([^/]+)$/,
    async (ctx, _url, [name]) => {
      const session = await ctx.refine.session(decodeURIComponent(name ?? ''));
      if (!session) notFound('refine session');
      return session;
    },
  ],
  [/^\/api\/jobs$/, async (ctx) => ctx.jobs.list()],
  [
    /^\/api\/jobs\/job$/,
    async (ctx, url) => {
      const job = await ctx.jobs.job(stringParam(url, 'registry', 4096), stringParam(url, 'id', 128));
      if (!job) notFound('job');
      return job;
    },
  ],
];

const POST_ROUTES: Array<[RegExp, (ctx: ApiContext, actions: ActionRunner, body: Record<string, unknown>) => Promise<unknown>]> = [
  [
    /^\/api\/actions\/run$/,
    async (ctx, actions, body) => {
      const pipeline = pipelineParam(typeof body.pipeline === 'string' ? encodeURIComponent(body.pipeline) : undefined);
      const stage = typeof body.stage === 'string' && body.stage !== '' ? body.stage : undefined;
      if (stage !== undefined && stage.length > 4096) throw new HttpError(400, 'stage: too long');
      const outcome = await actions.run(pipeline, { ...(stage ? { stage } : {}), force: body.force === true });
      if (!outcome.ok) throw new HttpError(outcome.status, outcome.error);
      ctx.pipelines.assessor.invalidate(pipeline);
      return outcome;
    },
  ],
  [
    /^\/api\/actions\/abort$/,
    async (_ctx, actions, body) => {
      const runId = typeof body.runId === 'string' ? body.runId : '';
      if (!isRunId(runId)) throw new HttpError(400, 'runId: expected a run id');
      const outcome = actions.abort(runId);
      if (!outcome.ok) throw new HttpError(outcome.status, outcome.error);
      return outcome;
    },
  ],
];

/** Answers an /api/ request (not the event stream); false when no route matches. */
export async function handleApi(ctx: ApiContext, req: IncomingMessage, res: ServerResponse, url: URL): Promise<boolean> {
  const method = req.method ?? 'GET';
  if (method === 'GET' || method === 'HEAD') {
    for (const [pattern, handler] of GET_ROUTES) {
      const match = pattern.exec(url.pathname);
      if (!match) continue;
      // The snapshot is current at least up to this event: the page resumes its stream from here.
      const seq = ctx.hub.seq;
      const data = await handler(ctx, url, match.slice(1), req);
      sendJson(req, res, 200, data, { 'X-Live-Seq': String(seq) });
      return true;
    }
    return false;
  }
  if (method === 'POST') {
    for (const [pattern, handler] of POST_ROUTES) {
      if (!pattern.test(url.pathname)) continue;
      if (!ctx.actions) throw new HttpError(403, 'the dashboard is read-only; start it with --allow-actions to run or abort from it');
      const body = await readJsonBody(req);
      sendJson(req, res, 200, await handler(ctx, ctx.actions, body));
      return true;
    }
    return false;
  }
  throw new HttpError(405, `${method} is not allowed here`);
}
