import { isRecord } from './json-extract.ts';

type Json = Record<string, unknown>;

const CEILING = ['ceiling_not_reached', 'ceiling_approaching', 'ceiling_reached'] as const;
const MODES = ['incremental_refinement', 'thesis_shift'] as const;
const ROLES = ['thesis_shift', 'supporting_fix'] as const;
const IMPACTS = ['incremental', 'structural', 'transformative'] as const;
export const OVERRIDE_PLACEHOLDER = 'Not stated by the evaluator; incremental refinement kept despite the approaching ceiling.';

export interface NextTask {
  id: string;
  description: string;
  verification: string;
  success_criteria: string;
  failure_signals: string[];
  required_evidence: string[];
  task_category?: 'fix' | 'evolution';
  strategy_role?: 'thesis_shift' | 'supporting_fix';
  implementation_guidance?: string;
  priority?: string | number;
  depends_on?: string[];
  chunk?: string;
  execution?: Json;
  verification_method?: string;
  metadata?: { impact?: (typeof IMPACTS)[number]; relates_to?: string[] };
}

/** next_tasks.json when the verdict is iterate (schema 2, the full shape MassGen's validator accepts). */
export interface NextTasksOk {
  schema_version: '2';
  status: 'ok';
  strategy_mode: (typeof MODES)[number];
  success_contract: { outcome_statement: string; quality_bar: string; fail_if_any: string[]; required_evidence: string[] };
  approach_assessment: Json & { ceiling_status: (typeof CEILING)[number] };
  tasks: NextTask[];
  [key: string]: unknown;
}

/** next_tasks.json when there is nothing to do (converged) or the evaluator's plan was unusable. */
export interface NextTasksPlaceholder {
  schema_version: '2';
  status: 'none' | 'degraded';
  reason: string;
}

export type NextTasksArtifact = NextTasksOk | NextTasksPlaceholder;

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}

function texts(value: unknown): string[] {
  if (typeof value === 'string' && value.trim() !== '') return [value.trim()];
  return Array.isArray(value) ? value.map(text).filter((v): v is string => v !== undefined) : [];
}

function checkTask(raw: unknown, where: string, reasons: string[]): NextTask | undefined {
  if (!isRecord(raw)) {
    reasons.push(`${where} is not an object`);
    return undefined;
  }
  const metadata = isRecord(raw.metadata) ? raw.metadata : {};
  const task: NextTask = {
    id: text(raw.id) ?? '',
    description: text(raw.description) ?? '',
    verification: text(raw.verification) ?? text(metadata.verification) ?? '',
    success_criteria: text(raw.success_criteria) ?? '',
    failure_signals: texts(raw.failure_signals),
    required_evidence: texts(raw.required_evidence),
  };
  if (!task.id) task.id = where.replace(/\W+/g, '_');
  for (const key of ['description', 'verification', 'success_criteria'] as const)
    if (!task[key]) reasons.push(`${where}.${key} is required`);
  for (const key of ['failure_signals', 'required_evidence'] as const)
    if (task[key].length === 0) reasons.push(`${where}.${key} needs at least one item`);
  // A strict answer schema spells "no role" as null.
  if (raw.strategy_role !== undefined && raw.strategy_role !== null) {
    if (!(ROLES as readonly unknown[]).includes(raw.strategy_role))
      reasons.push(`${where}.strategy_role must be one of ${ROLES.join(', ')}`);
    else task.strategy_role = raw.strategy_role as NextTask['strategy_role'];
  }
  if (raw.task_category === 'fix' || raw.task_category === 'evolution') task.task_category = raw.task_category;
  const guidance = text(raw.implementation_guidance);
  if (guidance) task.implementation_guidance = guidance;
  if (typeof raw.priority === 'string' || typeof raw.priority === 'number') task.priority = raw.priority;
  const dependsOn = texts(raw.depends_on);
  if (dependsOn.length > 0) task.depends_on = dependsOn;
  task.chunk = text(raw.chunk) ?? 'c1';
  if (isRecord(raw.execution) && (raw.execution.mode === 'inline' || raw.execution.mode === 'delegate')) task.execution = raw.execution;
  const method = text(raw.verification_method);
  if (method) task.verification_method = method;
  const meta: NonNullable<NextTask['metadata']> = {};
  if ((IMPACTS as readonly unknown[]).includes(metadata.impact)) meta.impact = metadata.impact as (typeof IMPACTS)[number];
  const relates = texts(metadata.relates_to).filter((id) => /^E\d+$/.test(id));
  if (relates.length > 0) meta.relates_to = relates;
  if (Object.keys(meta).length > 0) task.metadata = meta;
  return task;
}

function checkContract(raw: unknown, reasons: string[]): NextTasksOk['success_contract'] | undefined {
  if (!isRecord(raw)) {
    reasons.push('success_contract is required');
    return undefined;
  }
  const contract = {
    outcome_statement: text(raw.outcome_statement) ?? '',
    quality_bar: text(raw.quality_bar) ?? '',
    fail_if_any: texts(raw.fail_if_any),
    required_evidence: texts(raw.required_evidence),
  };
  for (const [key, value] of Object.entries(contract)) if (value.length === 0) reasons.push(`success_contract.${key} must be non-empty`);
  return contract;
}

function checkAssessment(raw: unknown, reasons: string[]): NextTasksOk['approach_assessment'] | undefined {
  if (!isRecord(raw) || !(CEILING as readonly unknown[]).includes(raw.ceiling_status)) {
    reasons.push(`approach_assessment.ceiling_status must be one of ${CEILING.join(', ')}`);
    return undefined;
  }
  const out: NextTasksOk['approach_assessment'] = { ceiling_status: raw.ceiling_status as (typeof CEILING)[number] };
  out.ceiling_explanation = text(raw.ceiling_explanation) ?? '';
  out.breakthroughs = Array.isArray(raw.breakthroughs) ? raw.breakthroughs.filter(isRecord) : [];
  if (isRecord(raw.paradigm_shift)) out.paradigm_shift = { ...raw.paradigm_shift, recommended: raw.paradigm_shift.recommended === true };
  return out;
}

function taskList(raw: unknown, where: string, reasons: string[]): NextTask[] {
  if (raw === undefined) return [];
  if (!Array.isArray(raw)) {
    reasons.push(`${where} must be an array`);
    return [];
  }
  return raw.map((item, i) => checkTask(item, `${where}[${i}]`, reasons)).filter((t): t is NextTask => t !== undefined);
}

export type NextTasksCheck = { ok: true; value: NextTasksOk } | { ok: false; reasons: string[] };

/** MassGen's `normalize_next_tasks_payload`: every rule it enforces, with its soft defaults. */
export function checkNextTasks(payload: unknown): NextTasksCheck {
  if (!isRecord(payload)) return { ok: false, reasons: ['next_tasks is not a JSON object'] };
  const reasons: string[] = [];
  const mode = payload.strategy_mode;
  if (!(MODES as readonly unknown[]).includes(mode)) reasons.push(`strategy_mode must be one of ${MODES.join(', ')}`);
  const contract = checkContract(payload.success_contract, reasons);
  const assessment = checkAssessment(payload.approach_assessment, reasons);
  const fixTasks = taskList(payload.fix_tasks, 'fix_tasks', reasons);
  const evolutionTasks = taskList(payload.evolution_tasks, 'evolution_tasks', reasons);
  let tasks = taskList(payload.tasks, 'tasks', reasons);
  if (payload.tasks === undefined) tasks = [...fixTasks, ...evolutionTasks];
  if (tasks.length === 0) reasons.push('tasks must be a non-empty array (the orchestrator reads only "tasks")');
  if (mode === 'thesis_shift' && !tasks.some((t) => t.strategy_role === 'thesis_shift'))
    reasons.push('strategy_mode is thesis_shift but no task has strategy_role "thesis_shift"');
  if (reasons.length > 0 || !contract || !assessment) return { ok: false, reasons };
  const value: NextTasksOk = {
    schema_version: '2',
    status: 'ok',
    strategy_mode: mode as NextTasksOk['strategy_mode'],
    success_contract: contract,
    approach_assessment: assessment,
    tasks,
  };
  for (const key of ['objective', 'primary_strategy', 'why_this_strategy', 'incremental_override_reason'] as const) {
    const v = text(payload[key]);
    if (v) value[key] = v;
  }
  if (
    value.strategy_mode === 'incremental_refinement' &&
    assessment.ceiling_status !== 'ceiling_not_reached' &&
    value.incremental_override_reason === undefined
  )
    value.incremental_override_reason = OVERRIDE_PLACEHOLDER;
  const deprioritize = texts(payload.deprioritize_or_remove);
  if (deprioritize.length > 0) value.deprioritize_or_remove = deprioritize;
  value.execution_scope = { active_chunk: 'c1' };
  if (fixTasks.length > 0) value.fix_tasks = fixTasks;
  if (evolutionTasks.length > 0) value.evolution_tasks = evolutionTasks;
  const evolved = payload.evolved_prompt;
  if (isRecord(evolved) && text(evolved.prompt) && text(evolved.evolution_rationale))
    value.evolved_prompt = { prompt: text(evolved.prompt), evolution_rationale: text(evolved.evolution_rationale) };
  return { ok: true, value };
}

export function placeholderNextTasks(status: NextTasksPlaceholder['status'], reason: string): NextTasksPlaceholder {
  return { schema_version: '2', status, reason };
}
