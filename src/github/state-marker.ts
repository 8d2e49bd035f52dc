import { createHash } from "node:crypto";
import { deflateRawSync, inflateRawSync } from "node:zlib";
import { threadStateSchema, type ThreadState } from "../workflow/state.js";
import { canonicalJson, planHash } from "../plan/hash.js";

export const MARKER_PREFIX = "<!-- blueprint:state";
const MARKER_PATTERN = /<!-- blueprint:state v1\.([A-Za-z0-9_-]*)\.([0-9a-f]{16}) -->/g;

const MAX_STATE_BYTES = 2 * 1024 * 1024;

export type MarkerRead =
  | { kind: "none" }
  | { kind: "ok"; state: ThreadState }
  | { kind: "corrupt"; reason: string };

/**
 * The state as a hidden HTML comment. Deflate + base64url keeps it small and keeps `-->` and markdown out of the payload;
 * the checksum makes a corrupted or hand-edited marker detectable.
 */
export function encodeStateMarker(state: ThreadState): string {
  const json = canonicalJson(state);
  // Compressed, so a 30-step plan with its history stays far below GitHub's comment limit.
  const payload = deflateRawSync(Buffer.from(json, "utf8"), { level: 9 }).toString("base64url");
  return `${MARKER_PREFIX} v1.${payload}.${checksum(json)} -->`;
}

export function readStateMarker(body: string): MarkerRead {
  if (!body.includes(MARKER_PREFIX)) return { kind: "none" };
  // The real marker is the last one: Blueprint always appends it after everything else.
  const match = [...body.matchAll(MARKER_PATTERN)].at(-1);
  if (!match) return { kind: "corrupt", reason: "the state marker is not in the expected format" };
  const [, payload = "", sum] = match;
  let json: string;
  try {
    json = inflateRawSync(Buffer.from(payload, "base64url"), { maxOutputLength: MAX_STATE_BYTES }).toString("utf8");
  } catch {
    return { kind: "corrupt", reason: "the state marker's content cannot be decoded" };
  }
  if (checksum(json) !== sum) return { kind: "corrupt", reason: "the state marker's checksum does not match its content" };
  let data: unknown;
  try {
    data = JSON.parse(json);
  } catch {
    return { kind: "corrupt", reason: "the state marker does not hold valid JSON" };
  }
  const parsed = threadStateSchema.safeParse(data);
  if (!parsed.success) return { kind: "corrupt", reason: "the state marker does not hold a valid Blueprint state" };
  const state = parsed.data;
  if (state.plan && state.planHash !== planHash(state.plan)) {
    return { kind: "corrupt", reason: "the plan in the state marker does not match its content hash" };
  }
  return { kind: "ok", state };
}

function checksum(json: string): string {
  return createHash("sha256").update(json).digest("hex").slice(0, 16);
}
