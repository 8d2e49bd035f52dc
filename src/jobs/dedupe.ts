import { trimOldest } from "../shared/bounded-map.js";

/** Remembers recent keys (delivery ids, comment ids) so a redelivered event never starts a second job. */
export class RecentKeys {
  private readonly keys = new Map<string, number>();

  constructor(private readonly capacity = 10_000) {}

  /** True the first time a key is seen. */
  firstTime(key: string): boolean {
    return this.claim([key]);
  }

  /**
   * Marks all the keys as seen when none of them was; false (and nothing marked) otherwise.
   * A claim whose handling failed before it was acknowledged can be `release`d, so GitHub's
   * redelivery of the same event is handled instead of dropped.
   */
  claim(keys: readonly string[]): boolean {
    if (keys.some((key) => this.keys.has(key))) return false;
    for (const key of keys) this.keys.set(key, Date.now());
    trimOldest(this.keys, this.capacity);
    return true;
  }

  release(keys: readonly string[]): void {
    for (const key of keys) this.keys.delete(key);
  }
}
