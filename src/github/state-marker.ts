import { createHmac, createSecretKey, hkdfSync, timingSafeEqual, type KeyObject } from "node:crypto";
import { deflateRawSync, inflateRawSync } from "node:zlib";
import { threadStateSchema, type ThreadState } from "../workflow/state.js";
import { canonicalJson, planHash } from "../plan/hash.js";

export const MARKER_PREFIX = "<!-- blueprint:state";
const MARKER_PATTERN = /<!-- blueprint:state v(\d+)\.([A-Za-z0-9_-]*)\.([A-Za-z0-9_-]*) -->/g;
const VERSION = 2;

const MAX_STATE_BYTES = 2 * 1024 * 1024;

/**
 * The key that signs hidden state: derived, so the secret it comes from (e.g. the webhook secret) never has to travel.
 */
export type StateKey = KeyObject;

/** Where a marker belongs: a marker is only valid in the comment it was written for. */
export interface MarkerBinding {
  /** `owner/name` */
  repository: string;
  /** Issue or pull-request number. */
  thread: number;
  comment: number;
}

/** A key and the thread it reads or writes on; add the comment id to get a MarkerBinding. */
export interface ThreadSeal {
  key: StateKey;
  repository: string;
  thread: number;
}

/** A key and the one comment a marker is written for. */
export type CommentSeal = ThreadSeal & { comment: number };

export type MarkerRead = { kind: "none" } | { kind: "ok"; state: ThreadState } | { kind: "corrupt"; reason: string };

/** HKDF from a secret the operator holds (BLUEPRINT_STATE_SECRET, or the App's WEBHOOK_SECRET). */
export function deriveStateKey(secret: string): StateKey {
  if (!secret) throw new Error("the hidden state key needs a non-empty secret");
  return createSecretKey(Buffer.from(hkdfSync("sha256", secret, "blueprint", "blueprint hidden state v2", 32)));
}

export function threadSeal(
  key: StateKey,
  thread: { repo: { owner: string; name: string }; number: number },
): ThreadSeal {
  return { key, repository: `${thread.repo.owner}/${thread.repo.name}`, thread: thread.number };
}

export function commentSeal(seal: ThreadSeal, comment: number): CommentSeal {
  return { ...seal, comment };
}

export function hasStateMarker(body: string): boolean {
  return body.includes(MARKER_PREFIX);
}

/**
 * The state as a hidden HTML comment. Deflate + base64url keeps it small and keeps `-->` and
 * markdown out of the payload; an HMAC over the payload and its binding (repository, thread,
 * comment) makes a marker that was edited, or copied from any other comment, detectable by
 * whoever holds the key, and impossible to forge for anyone who does not.
 */
export function encodeStateMarker(state: ThreadState, seal: CommentSeal): string {
  const json = canonicalJson(state);
  // Compressed, so a 30-step plan with its history stays far below GitHub's comment limit.
  const payload = deflateRawSync(Buffer.from(json, "utf8"), { level: 9 }).toString("base64url");
  return `${MARKER_PREFIX} v${VERSION}.${payload}.${signature(payload, seal)} -->`;
}

export function readStateMarker(body: string, seal: CommentSeal): MarkerRead {
  if (!hasStateMarker(body)) return { kind: "none" };
  // The real marker is the last one: Blueprint always appends it after everything else.
  const match = [...body.matchAll(MARKER_PATTERN)].at(-1);
  if (!match) return { kind: "corrupt", reason: `the state marker is not in the expected format${whereBroken(body)}` };
  const [, version, payload = "", mac = ""] = match;
  if (Number(version) < VERSION) {
    return {
      kind: "corrupt",
      reason: "the state marker was written by an older Blueprint that did not sign it, so it cannot be trusted",
    };
  }
  if (Number(version) !== VERSION)
    return { kind: "corrupt", reason: `the state marker has an unknown version (v${version})` };
  // Checked before anything is decoded: content nobody signed is never even decompressed.
  if (!sameSignature(mac, signature(payload, seal))) {
    return {
      kind: "corrupt",
      reason: "the state marker's signature does not match: it was edited, or copied from another comment",
    };
  }
  let json: string;
  try {
    json = inflateRawSync(Buffer.from(payload, "base64url"), { maxOutputLength: MAX_STATE_BYTES }).toString("utf8");
  } catch {
    return { kind: "corrupt", reason: "the state marker's content cannot be decoded" };
  }
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

/** Where the last marker leaves the expected alphabet, for the reason a damaged marker is reported with. */
function whereBroken(body: string): string {
  const marker = body.slice(body.lastIndexOf(MARKER_PREFIX) + MARKER_PREFIX.length);
  const end = marker.indexOf("-->");
  if (end === -1) return " (it has no end)";
  const bad = /[^A-Za-z0-9_.\- ]/.exec(marker.slice(0, end));
  return bad ? ` (an unexpected ${JSON.stringify(bad[0])} ${bad.index} characters into it)` : "";
}

function signature(payload: string, seal: CommentSeal): string {
  const bound = [
    `blueprint:state v${VERSION}`,
    seal.repository.toLowerCase(),
    String(seal.thread),
    String(seal.comment),
    payload,
  ].join("\n");
  return createHmac("sha256", seal.key).update(bound).digest("base64url");
}

function sameSignature(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}
