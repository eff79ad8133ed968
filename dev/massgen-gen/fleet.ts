// Many runs at once (tests and benches of the cross-run summary): the bundled scenarios in turn,
// each run on one of the given models. Run i starts 10 minutes after run i-1 (build-session.ts),
// so 1,000 runs span about a week.
import type { ScenarioScript } from './model.ts';
import { SCENARIOS } from './scenarios.ts';

export const FLEET_MODELS: readonly string[] = ['openai/gpt-4o-mini', 'openai/gpt-4.1-mini', 'scripted-model'];

/** `count` scripts: scenario i mod 5 on model i mod models.length, each with its own name (and so its own PRNG stream). */
export function fleetScripts(count: number, models: readonly string[] = FLEET_MODELS, first = 0): ScenarioScript[] {
  const out: ScenarioScript[] = [];
  for (let i = first; i < first + count; i++) {
    const base = SCENARIOS[i % SCENARIOS.length] as ScenarioScript;
    out.push({ ...base, name: `${base.name}-${i}`, model: models[i % models.length] as string });
  }
  return out;
}
