import type { PermissionLevel } from "../github/permission.js";
import { trimOldest } from "../shared/bounded-map.js";

/**
 * Collaborator permissions, remembered for a short while per repository and person, so a burst of
 * commands by the same people costs one GitHub call each instead of one per command. Concurrent
 * look-ups share the call in flight; a failed look-up is not remembered. A revoked permission
 * takes effect within `ttlMs` (30 s by default).
 */
export class PermissionCache {
  private readonly entries = new Map<string, { at: number; level: Promise<PermissionLevel> }>();

  constructor(
    private readonly ttlMs = 30_000,
    private readonly capacity = 5_000,
    private readonly now: () => number = Date.now,
  ) {}

  get(repository: string, login: string, lookUp: () => Promise<PermissionLevel>): Promise<PermissionLevel> {
    const key = `${repository.toLowerCase()}\u0000${login.toLowerCase()}`;
    const cached = this.entries.get(key);
    if (cached && this.now() - cached.at < this.ttlMs) return cached.level;
    const level = lookUp();
    this.entries.delete(key);
    this.entries.set(key, { at: this.now(), level });
    level.catch(() => {
      if (this.entries.get(key)?.level === level) this.entries.delete(key);
    });
    trimOldest(this.entries, this.capacity);
    return level;
  }
}
