// `refinery run` as one session: check against the last run's record → load, check and plan →
// check what the tasks need → execute → record. It returns one outcome per run and emits the
// run's events; it never prints or exits. The CLI and a watch answering a client call it alike.
// What follows the up-to-date check is imported only when something changed: a no-op run loads
// the record, stats what it lists, and reports, with nothing of the pipeline loaded.
import path from 'node:path';
import { Observations, statStamp } from '../state/observations.ts';
import { refineryVersion } from '../state/noop-recording.ts';
import { compareWithLastRun, manifestFile, manifestKey } from '../state/run-manifest.ts';
import { reportUpToDate } from './run-bus.ts';
import type { RunOutcome, RunRequest } from './types.ts';

/** Asking for particular stages, or every stage again, is not answered from the last run's record. */
function mayAnswerFromRecord(request: RunRequest): boolean {
  return !request.force && request.only.length === 0 && request.shard === undefined;
}

export async function runSession(request: RunRequest): Promise<RunOutcome> {
  const { root, pipelineFile } = request;
  // Made before any stat this run records is taken: see settled-stat.ts.
  const observations = new Observations();
  // The pipeline file is recorded by its stat, taken before anything reads it, like every file a
  // run reads: a no-op reads none of it, and an edit is a change that sends the run to the full check.
  const pipelineRel = path.relative(root, pipelineFile);
  observations.file(pipelineRel, statStamp(pipelineFile));
  const key = manifestKey({ version: refineryVersion(), pipelineFile, params: request.params });
  const recordFile = manifestFile(root, pipelineFile);
  // Under a watch, what its watcher saw stands in for stat'ing what it vouches for.
  const last = mayAnswerFromRecord(request)
    ? compareWithLastRun(root, pipelineFile, key, request.warn, request.services?.vouch(recordFile))
    : undefined;
  if (last) {
    const changed = 'changed' in last ? last.changed.files.length : 0;
    const changedFolders = 'changed' in last ? last.changed.dirs.length : 0;
    request.notify({ kind: 'checked', files: last.checked.files, vouched: last.checked.vouched, changed, changedFolders });
  }
  if (last && 'unchanged' in last) {
    request.services?.recordHolds(recordFile, request.services.epoch, { kind: 'confirmed' });
    return { code: 'up-to-date', ...reportUpToDate(request, last.unchanged) };
  }
  // Some files changed, nothing else: only the stages they reach need checking (an edited
  // pipeline is not the one the last run's plan was expanded from).
  const changed = last && 'changed' in last && !last.changed.files.includes(pipelineRel) ? last.changed : undefined;
  const { runChanged } = await import('./execute-run.ts');
  return runChanged(request, { observations, key, recordFile, changed });
}
