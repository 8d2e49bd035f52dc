import { describeRetry, type ModelRetry } from "../agent/model.js";
import type { ThreadPort } from "./ports.js";

/** Starts the progress line that says a model request is being retried (the CLI prints such lines too). */
const RETRY_LINE_PREFIX = "⚠️ ";

/** The progress line for a retried model request: which attempt runs, why, and the waits. */
export function modelRetryLine(retry: ModelRetry): string {
  return `${RETRY_LINE_PREFIX}${describeRetry(retry)}`;
}

/**
 * The one status comment a job keeps editing. Progress edits are coalesced to at most one per
 * interval; the final edit always goes out.
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

  async final(body: string): Promise<void> {
    this.finished = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.pending = null;
    await this.writing;
    await this.port.updateComment(this.id, body);
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
