import { createHash } from "node:crypto";
import type { Plan } from "./schema.js";

/** A stable content hash of a plan: same plan, same hash, whatever the key order. */
export function planHash(plan: Plan): string {
  return createHash("sha256").update(canonicalJson(plan)).digest("hex").slice(0, 16);
}

export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}
