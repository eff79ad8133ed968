/** What a run looked at on disk, so a later run can tell cheaply whether anything changed. */
export class Observations {
  /** Files whose content or stat fed a decision (inputs, outputs, task sources, schemas). */
  readonly files = new Set<string>();
  /** Folders whose listing fed a decision (glob and directory walks). */
  readonly dirs = new Set<string>();
  /** Answers of `exists(path)` in expressions. */
  readonly probes = new Map<string, boolean>();

  probe(rel: string, exists: (rel: string) => boolean): boolean {
    const answer = exists(rel);
    this.probes.set(rel, answer);
    return answer;
  }
}
