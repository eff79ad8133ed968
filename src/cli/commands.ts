import type { Command } from './command.ts';

/** Each command module is loaded only when it is the one asked for, to keep start-up fast. */
export const COMMANDS: Record<string, { summary: string; load: () => Promise<Command> }> = {
  init: {
    summary: 'Set up a project here: config, a starter pipeline, task and schema, a Justfile',
    load: async () => (await import('./commands/init.ts')).initCommand,
  },
  run: { summary: 'Run a pipeline: every stage whose inputs changed', load: async () => (await import('./commands/run.ts')).runCommand },
  plan: { summary: 'Show what a run would do and why', load: async () => (await import('./commands/plan.ts')).planCommand },
  why: { summary: 'Explain why one stage would run or is up to date', load: async () => (await import('./commands/plan.ts')).whyCommand },
  graph: { summary: 'Print the stage graph as mermaid, dot or json', load: async () => (await import('./commands/graph.ts')).graphCommand },
  validate: {
    summary: 'Validate a file against a JSON Schema',
    load: async () => (await import('./commands/validate.ts')).validateCommand,
  },
  status: {
    summary: 'Show the last runs and the state of each stage',
    load: async () => (await import('./commands/status.ts')).statusCommand,
  },
  task: { summary: 'Run one task on its own', load: async () => (await import('./commands/task.ts')).taskCommand },
  watch: {
    summary: 'Keep pipelines up to date: rerun what changed, as soon as it changes',
    load: async () => (await import('./commands/watch.ts')).watchCommand,
  },
  jobs: {
    summary: 'Delegate jobs to agents over MQTT: submit, status, list, wait, verify, logs, publish',
    load: async () => (await import('./commands/jobs.ts')).jobsCommand,
  },
  worker: {
    summary: 'Run stages for `refinery run --workers` on this machine (MQTT 5 + remote cache)',
    load: async () => (await import('./commands/worker.ts')).workerCommand,
  },
  broker: { summary: 'Run an embedded MQTT broker on 127.0.0.1', load: async () => (await import('./commands/broker.ts')).brokerCommand },
  logs: {
    summary: 'List, analyze, summarize and bundle MassGen log directories',
    load: async () => (await import('./commands/logs.ts')).logsCommand,
  },
  refine: {
    summary: "Refine sessions: export a session's criteria for MassGen",
    load: async () => (await import('./commands/refine.ts')).refineCommand,
  },
  ui: {
    summary: 'Serve the live dashboard: pipelines, runs, MassGen analyses, refine sessions, jobs',
    load: async () => (await import('./commands/ui.ts')).uiCommand,
  },
};
