import { closeSync, readSync } from 'node:fs';
import { type PrecheckAnswer, parsePrecheckAnswer } from '../engine/state/noop-precheck.ts';

const VARIABLE = 'REFINERY_PRECHECK_FD';

/**
 * The pipe bin/quick-client.pl leaves open for Node, on which the no-op pre-check
 * (bin/noop-precheck.pl) writes its answer and ends. Read at most once, and closed as soon as
 * the command knows whether it wants the answer: it is no close-on-exec descriptor, so a
 * command started while it is open would inherit it.
 */
export class PrecheckPipe {
  private fd: number | undefined;

  private constructor(fd: number) {
    this.fd = fd;
  }

  /**
   * The pipe named in the environment (`<descriptor>:<pid>`), which loses the name: no task or
   * nested refinery sees it. The quick client names its own pid, which is this process's (it
   * execs Node): a variable left in the environment from elsewhere names another, and no
   * descriptor of this process is touched for it.
   */
  static take(env: NodeJS.ProcessEnv, pid: number): PrecheckPipe | undefined {
    const value = env[VARIABLE];
    if (value === undefined) return undefined;
    delete env[VARIABLE];
    const match = /^(\d{1,6}):(\d{1,10})$/.exec(value);
    return match && Number(match[1]) > 2 && Number(match[2]) === pid ? new PrecheckPipe(Number(match[1])) : undefined;
  }

  /** Waits for the pre-check to finish and returns its answer (undefined: none, or not a whole one); closes the pipe. */
  answer(): PrecheckAnswer | undefined {
    const fd = this.fd;
    if (fd === undefined) return undefined;
    const chunks: Buffer[] = [];
    try {
      for (;;) {
        const chunk = Buffer.allocUnsafe(65536);
        const read = readSync(fd, chunk, 0, chunk.length, null);
        if (read === 0) break;
        chunks.push(chunk.subarray(0, read));
      }
    } catch {
      // Not a pipe we can read (a stale variable): no answer.
      chunks.length = 0;
    } finally {
      this.close();
    }
    return chunks.length === 0 ? undefined : parsePrecheckAnswer(Buffer.concat(chunks));
  }

  close(): void {
    if (this.fd === undefined) return;
    try {
      closeSync(this.fd);
    } catch {
      // Not open after all (a stale variable): nothing to close.
    }
    this.fd = undefined;
  }
}
