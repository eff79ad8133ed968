// What a run that executes stages needs beyond the no-op check, loaded with one import (one
// chunk of the bundle rather than several): the no-op path loads none of it. The part of the
// last run's plan that changed files reach is read with it: as one dynamic import rather than
// five, the bundle splits the modules of a touch into 40 files rather than 48 (~0.4 ms each).
export { readPartialPlan, writePlanRecord } from '../../engine/pipeline/plan-record.ts';
export { projectResolver } from '../../engine/pipeline/resolve-names.ts';
export { Locator } from '../../engine/pipeline/locate.ts';
export { parseLocatedYaml } from '../../engine/pipeline/yaml-source.ts';
export { execute } from '../../engine/executor/executor.ts';
export { commandLookahead, startRunnersAhead } from '../../engine/executor/stage-context.ts';
export { preflightPlan } from '../../engine/executor/preflight.ts';
export { removeLeftoverStaging } from '../../engine/executor/staging.ts';
export { SchemaRegistry } from '../../engine/artifacts/schema-registry.ts';
export { FileHashes } from '../../engine/state/file-hashes.ts';
export { StageState } from '../../engine/state/stage-state.ts';
export { acquireProjectLock } from '../../engine/state/project-lock.ts';
