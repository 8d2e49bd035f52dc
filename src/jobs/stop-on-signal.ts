/** SIGTERM or SIGINT (once): a log line, `stop()`, then exit 0. */
export function stopOnSignal(
  log: { info(fields: object, message: string): void },
  message: string,
  stop: () => Promise<void>,
): void {
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    process.once(signal, () => {
      log.info({ signal }, message);
      void stop().finally(() => process.exit(0));
    });
  }
}
