// The MQTT topics of a project's workers. Jobs go to one topic that every worker of the project
// reads through a shared subscription (the broker hands each job to one of them); each run has its
// own topic for the workers' replies. Workers say their free slots on the project's slots topic,
// and a coordinator asks for them on its calls topic (every worker reads both, none shared). The project id is the same in every clone of the project.

/** What a project id may be: it becomes a topic level, so no `/`, `+`, `#` or `$`. */
export const PROJECT_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$/;

/** The shared subscription's group: every worker of every project is in it, the topic tells projects apart. */
export const SHARE_GROUP = 'refinery';

export function jobsTopic(project: string): string {
  return `refinery/${project}/stages`;
}

export function sharedJobsTopic(project: string): string {
  return `$share/${SHARE_GROUP}/${jobsTopic(project)}`;
}

export function repliesTopic(project: string, runId: string): string {
  return `refinery/${project}/runs/${runId}`;
}

export function slotsTopic(project: string): string {
  return `refinery/${project}/slots`;
}

export function callsTopic(project: string): string {
  return `refinery/${project}/calls`;
}
