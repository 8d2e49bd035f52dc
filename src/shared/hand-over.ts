/**
 * Why a job stops when its worker shuts down gracefully and puts the job back in the queue: not a
 * cancellation and not a failure, since another worker resumes it from what was pushed. A use case
 * that sees it stops at its next safe point and says only that the job moves on.
 */
export class HandOver extends Error {
  /** A use case stopped for it (see `handedOver`): only then is the job unfinished and put back. */
  taken = false;

  constructor() {
    super("Blueprint is restarting: the job goes back to the queue and another worker resumes it from what was pushed");
    this.name = "HandOver";
  }
}

/**
 * For a use case at a safe point: whether its worker is handing the job over, in which case the use
 * case stops there, and this records that it did (`handOverTaken`).
 */
export function handedOver(signal: AbortSignal): boolean {
  if (!(signal.aborted && signal.reason instanceof HandOver)) return false;
  signal.reason.taken = true;
  return true;
}

/**
 * For the worker, after the use case returned: whether it stopped for the hand-over. A job asked to
 * stop after its last safe point (posting its plan, opening its pull request) finished: putting it
 * back would run it twice.
 */
export function handOverTaken(signal: AbortSignal): boolean {
  return signal.aborted && signal.reason instanceof HandOver && signal.reason.taken;
}
