/** An error's message as a sentence for the thread. */
export function plainError(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.endsWith(".") ? message : `${message}.`;
}
