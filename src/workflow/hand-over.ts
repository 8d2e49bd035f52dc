/**
 * Why a job stops when its worker shuts down gracefully and puts the job back in the queue: not a
 * cancellation and not a failure, since another worker resumes it from what was pushed. A use case
 * that sees it stops at its next safe point and says only that the job moves on.
 */
export class HandOver extends Error {
  constructor() {
    super("Blueprint is restarting: the job goes back to the queue and another worker resumes it from what was pushed");
    this.name = "HandOver";
  }
}

export function handedOver(signal: AbortSignal): boolean {
  return signal.aborted && signal.reason instanceof HandOver;
}
