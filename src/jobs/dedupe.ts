/** Remembers recent keys (delivery ids, comment ids) so a redelivered event never starts a second job. */
export class RecentKeys {
  private readonly keys = new Map<string, number>();

  constructor(private readonly capacity = 10_000) {}

  /** True the first time a key is seen. */
  firstTime(key: string): boolean {
    if (this.keys.has(key)) return false;
    this.keys.set(key, Date.now());
    if (this.keys.size > this.capacity) {
      const oldest = this.keys.keys().next().value;
      if (oldest !== undefined) this.keys.delete(oldest);
    }
    return true;
  }
}
