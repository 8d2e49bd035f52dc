import { describeRetry, type ModelClient, type ModelRetry } from "../../agent/model.js";
import type { ThreadPort } from "../ports.js";

/** Starts the progress line that says a model request is being retried (the CLI prints such lines too). */
const RETRY_LINE_PREFIX = "⚠️ ";

/** The progress line for a retried model request: which attempt runs, why, and the waits. */
export function modelRetryLine(retry: ModelRetry): string {
  return `${RETRY_LINE_PREFIX}${describeRetry(retry)}`;
}

/**
 * A model client whose retries show where people look: `show` gets the retry line when a retry
 * starts, and null once the model answers again (the line is then stale).
 */
export function showingRetries(
  modelFor: (onRetry: (retry: ModelRetry) => void) => ModelClient,
  show: (retryLine: string | null) => void,
): ModelClient {
  let retrying = false;
  const model = modelFor((retry) => {
    retrying = true;
    show(modelRetryLine(retry));
  });
  return {
    model: model.model,
    async complete(messages, tools, options) {
      const reply = await model.complete(messages, tools, options);
      if (retrying) {
        retrying = false;
        show(null);
      }
      return reply;
    },
  };
}

/**
 * The one status comment a job keeps editing. Progress edits are coalesced to at most one per
 * interval; `write` and the final edit go out at once, after any edit in flight, and replace the
 * progress waiting to go out.
 */
export class TrackingComment {
  private pending: string | null = null;
  private lastWrite = 0;
  private timer: NodeJS.Timeout | null = null;
  private writing: Promise<void> = Promise.resolve();
  private finished = false;

  constructor(
    private readonly port: ThreadPort,
    readonly id: number,
    readonly url: string,
    private readonly intervalMs: number,
    private readonly onError: (error: unknown) => void,
  ) {}

  progress(body: string): void {
    if (this.finished) return;
    this.pending = body;
    if (this.timer) return;
    const wait = Math.max(0, this.lastWrite + this.intervalMs - Date.now());
    this.timer = setTimeout(() => {
      this.timer = null;
      this.flush();
    }, wait);
    this.timer.unref?.();
  }

  /** An edit that must not be lost or reordered (a step done, a report): sent now, in order. */
  async write(body: string): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.pending = null;
    this.lastWrite = Date.now();
    const edit = this.writing.then(() => this.port.updateComment(this.id, body));
    // The caller hears this edit's failure; later edits still wait for it to settle.
    this.writing = edit.catch(() => undefined);
    await edit;
  }

  async final(body: string): Promise<void> {
    this.finished = true;
    await this.write(body);
  }

  private flush(): void {
    const body = this.pending;
    if (body === null || this.finished) return;
    this.pending = null;
    this.lastWrite = Date.now();
    this.writing = this.writing
      .then(() => (this.finished ? undefined : this.port.updateComment(this.id, body)))
      .catch(this.onError);
  }
}
