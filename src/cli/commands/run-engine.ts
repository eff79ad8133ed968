// What a run that executes stages needs beyond the no-op check, loaded with one import (one
// chunk of the bundle rather than several): the no-op path loads none of it.
export { execute } from '../../engine/executor/executor.ts';
export { startRunnersAhead } from '../../engine/executor/stage-context.ts';
export { preflightPlan } from '../../engine/executor/preflight.ts';
export { removeLeftoverStaging } from '../../engine/executor/staging.ts';
export { SchemaRegistry } from '../../engine/artifacts/schema-registry.ts';
export { FileHashes } from '../../engine/state/file-hashes.ts';
export { StageState } from '../../engine/state/stage-state.ts';
