/**
 * A run's wall-time limit as a deadline (epoch ms) that model requests and commands are held to,
 * so no single request or command can outlive the run.
 */

/** Below this, a command is not started: the runner gives every command at least a second. */
export const MIN_COMMAND_MS = 1000;

/** Milliseconds left before the deadline (none left: 0; no deadline: Infinity). */
export function timeLeft(deadline: number | undefined, now = Date.now()): number {
  return deadline === undefined ? Number.POSITIVE_INFINITY : Math.max(0, deadline - now);
}

/** A timeout capped at the time left before the deadline; unchanged without one. */
export function capAtDeadline(timeoutMs: number, deadline: number | undefined, now = Date.now()): number {
  return Math.min(timeoutMs, timeLeft(deadline, now));
}

/** "20 minutes", "2 seconds": a limit worded for the people reading the report. */
export function describeDuration(ms: number): string {
  const [amount, unit] =
    ms >= 60_000 ? [Math.round(ms / 60_000), "minute"] : [Math.max(1, Math.round(ms / 1000)), "second"];
  return `${amount} ${unit}${amount === 1 ? "" : "s"}`;
}

/**
 * A signal that aborts `ms` from now, with AbortSignal.timeout's reason (a DOMException named "TimeoutError"), on
 * this process's `setTimeout`: a test's fake clock drives it, which it cannot do for AbortSignal.timeout's own
 * timer. `clear` drops the timer once the work it bounds has ended; it never keeps the process alive either way.
 */
export function timeoutSignal(ms: number): { signal: AbortSignal; clear: () => void } {
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new DOMException("The operation was aborted due to timeout", "TimeoutError")),
    ms,
  );
  timer.unref();
  return { signal: controller.signal, clear: () => clearTimeout(timer) };
}

/**
 * Settles with the promise, or rejects as soon as the signal aborts: a caller stops waiting at the
 * deadline even when the work (an SDK sleeping before a retry, say) does not watch the signal.
 */
export function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    // The work is abandoned; its own failure is of no interest any more (and must not go unhandled).
    work.catch(() => {});
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}

/**
 * A signal that aborts `graceMs` after `signal` does: time for work that watches the signal (a
 * command being killed) to finish and report, before the caller stops waiting for it.
 */
export function afterGrace(signal: AbortSignal, graceMs: number): AbortSignal {
  const controller = new AbortController();
  const abortLater = () => setTimeout(() => controller.abort(signal.reason), graceMs).unref();
  if (signal.aborted) abortLater();
  else signal.addEventListener("abort", abortLater, { once: true });
  return controller.signal;
}
