/** `read`'s answer, reused until it is `ms` old and then read again; a failed read is not kept. */
export function lastingFor<T>(ms: number, read: () => Promise<T>): () => Promise<T> {
  let last: { at: number; value: Promise<T> } | undefined;
  return () => {
    if (last && Date.now() - last.at < ms) return last.value;
    const value = read();
    const kept = (last = { at: Date.now(), value });
    value.catch(() => {
      if (last === kept) last = undefined;
    });
    return value;
  };
}
