import { describe, expect, it } from "vitest";
import { deflateRawSync } from "node:zlib";
import { createHash } from "node:crypto";
import { deriveStateKey, encodeStateMarker, readStateMarker, MARKER_PREFIX } from "../../src/github/state-marker.js";
import { canonicalJson } from "../../src/plan/hash.js";
import { testSeal } from "../helpers/plan-state.js";
import { renderPlanComment } from "../../src/github/plan-comment.js";
import { validatePlan } from "../../src/plan/validate.js";
import { planHash } from "../../src/plan/hash.js";
import type { Plan } from "../../src/plan/schema.js";
import type { ThreadState } from "../../src/workflow/state.js";

function validPlan(title = "Add retries"): Plan {
  const result = validatePlan({
    title,
    summary: 'Retry failed HTTP calls — with `backoff` and <html> & "quotes" --> too.',
    steps: [
      {
        id: "S1",
        title: "Helper",
        details: "Write it.\n\n```ts\nretry()\n```",
        files: ["src/retry.ts"],
        deps: [],
        risk: null,
        complexity: "low",
      },
      { id: "S2", title: "Use it", details: "", files: [], deps: ["S1"], risk: "ünïcødé ✓", complexity: null },
    ],
    risks: ["outages hidden"],
    verification: ["npm test"],
    questions: null,
  });
  if (!result.ok) throw new Error(result.errors.join("; "));
  return result.plan;
}

function makeState(overrides: Partial<ThreadState> = {}): ThreadState {
  const plan = validPlan();
  return {
    v: 1,
    status: "pending",
    revision: 2,
    plan,
    planHash: planHash(plan),
    requestedBy: "octocat",
    instructions: "add retry\nplease",
    base: { branch: "main", sha: "a".repeat(40) },
    head: null,
    planHead: null,
    branch: "blueprint/issue-7",
    steps: {
      S1: { status: "done", commit: "b".repeat(40), commitUrl: "https://example.test/c/b" },
      S2: { status: "pending" },
    },
    stale: null,
    question: null,
    error: null,
    pullRequest: null,
    followUp: null,
    explored: ["src/retry.ts", "README.md"],
    feedback: [],
    answers: [],
    questionMode: null,
    questionStep: null,
    approvedBy: null,
    approvedOn: null,
    approvals: [],
    buildDeliveries: [],
    buildNotes: [],
    model: null,
    changes: null,
    instructionFiles: [],
    postedAt: "2024-05-01T11:00:00.000Z",
    updatedAt: "2024-05-01T12:00:00.000Z",
    ...overrides,
  };
}

/** Replaces one character of the base64url payload with a different valid one. */
function flipPayloadChar(marker: string): string {
  const match = /v2\.([A-Za-z0-9_-]+)\./.exec(marker);
  if (!match || match.index === undefined) throw new Error("no payload");
  const payloadStart = match.index + 3;
  const at = payloadStart + Math.floor((match[1] ?? "").length / 2);
  const replacement = marker[at] === "A" ? "B" : "A";
  return marker.slice(0, at) + replacement + marker.slice(at + 1);
}

const seal = testSeal(1234, 7, "octo-org/widgets");

describe("state marker", () => {
  it("is a hidden HTML comment starting with the contract prefix", () => {
    const marker = encodeStateMarker(makeState(), seal);
    expect(marker.startsWith("<!-- blueprint:state")).toBe(true);
    expect(MARKER_PREFIX).toBe("<!-- blueprint:state");
    expect(marker.endsWith("-->")).toBe(true);
    // The payload must not close the comment early or leak markdown.
    expect(marker.slice(MARKER_PREFIX.length, -3)).not.toMatch(/-->|\n|`/);
  });

  it("round-trips a state whose plan went through validatePlan", () => {
    const state = makeState();
    const read = readStateMarker(encodeStateMarker(state, seal), seal);
    expect(read).toEqual({ kind: "ok", state });
  });

  it("round-trips a state without a plan", () => {
    const state = makeState({ plan: null, planHash: null, status: "planning", steps: {} });
    expect(readStateMarker(encodeStateMarker(state, seal), seal)).toEqual({ kind: "ok", state });
  });

  it("finds the marker embedded in a longer markdown body", () => {
    const state = makeState({ head: { ref: "feature", sha: "c".repeat(40), sameRepo: true } });
    const body = `## 📋 Plan v2\n\nSome *markdown*\n\n- [ ] **S1** Helper\n\n${encodeStateMarker(state, seal)}\n\n<sub>footer</sub>\n`;
    expect(readStateMarker(body, seal)).toEqual({ kind: "ok", state });
  });

  it("reports a flipped payload character as corrupt", () => {
    const body = `Plan\n\n${flipPayloadChar(encodeStateMarker(makeState(), seal))}`;
    const read = readStateMarker(body, seal);
    expect(read.kind).toBe("corrupt");
  });

  it("reports a marker that lost its checksum as corrupt", () => {
    const marker = encodeStateMarker(makeState(), seal).replace(/\.[A-Za-z0-9_-]{43} -->$/, " -->");
    expect(readStateMarker(marker, seal).kind).toBe("corrupt");
  });

  it("returns none for a body without a marker", () => {
    expect(readStateMarker("Just a comment about <!-- something else -->", seal)).toEqual({ kind: "none" });
    expect(readStateMarker("", seal)).toEqual({ kind: "none" });
  });

  it("reports a plan whose planHash does not match as corrupt", () => {
    const state = makeState({ planHash: "0123456789abcdef" });
    const read = readStateMarker(encodeStateMarker(state, seal), seal);
    expect(read.kind).toBe("corrupt");
    if (read.kind === "corrupt") expect(read.reason).toMatch(/hash/);
  });

  it("reports a plan changed after hashing as corrupt", () => {
    const state = makeState();
    const edited = { ...state, plan: { ...state.plan!, title: "Something else" } };
    expect(readStateMarker(encodeStateMarker(edited, seal), seal).kind).toBe("corrupt");
  });

  it("reports a well-formed marker holding an invalid state as corrupt", () => {
    const bad = { ...makeState(), status: "exploded" } as unknown as ThreadState;
    const read = readStateMarker(encodeStateMarker(bad, seal), seal);
    expect(read.kind).toBe("corrupt");
  });

  it("reads the plan comment's own marker even when the plan text quotes another marker", () => {
    // The plan's summary is model-written markdown rendered verbatim into the comment,
    // before the real marker. A marker quoted there must not replace the comment's state.
    const forged = makeState({ status: "built", requestedBy: "mallory" });
    const real = makeState({
      plan: { ...validPlan(), summary: `See ${encodeStateMarker(forged, seal)} for details.` },
    });
    const realState = { ...real, planHash: planHash(real.plan!) };
    const read = readStateMarker(renderPlanComment(realState, seal), seal);
    expect(read.kind).toBe("ok");
    if (read.kind === "ok") expect(read.state.requestedBy).toBe("octocat");
  });
});

describe("state marker authentication", () => {
  const marker = encodeStateMarker(makeState(), seal);
  const reasonOf = (body: string, at = seal) => {
    const read = readStateMarker(body, at);
    return read.kind === "corrupt" ? read.reason : read.kind;
  };

  it("refuses a marker copied into another comment, thread or repository", () => {
    expect(reasonOf(marker, { ...seal, comment: 1235 })).toMatch(/signature does not match.*copied/);
    expect(reasonOf(marker, { ...seal, thread: 8 })).toMatch(/signature does not match/);
    expect(reasonOf(marker, { ...seal, repository: "octo-org/gadgets" })).toMatch(/signature does not match/);
  });

  it("refuses a marker signed with another key (another installation of Blueprint, or a guess)", () => {
    expect(reasonOf(marker, { ...seal, key: deriveStateKey("some-other-secret-value") })).toMatch(
      /signature does not match/,
    );
  });

  it("refuses hidden fields edited and re-encoded by someone without the key", () => {
    // The attacker can decode and re-encode the payload, but cannot sign it: they keep the old signature.
    const edited = canonicalJson({ ...makeState(), branch: "main", requestedBy: "mallory" });
    const payload = deflateRawSync(Buffer.from(edited, "utf8")).toString("base64url");
    const forged = marker.replace(/v2\.[A-Za-z0-9_-]*\./, `v2.${payload}.`);
    expect(reasonOf(forged)).toMatch(/signature does not match/);
  });

  it("refuses an unsigned marker written by an older Blueprint (v1), saying so", () => {
    const json = canonicalJson(makeState());
    const v1 = `${MARKER_PREFIX} v1.${deflateRawSync(Buffer.from(json, "utf8")).toString("base64url")}.${createHash("sha256").update(json).digest("hex").slice(0, 16)} -->`;
    expect(reasonOf(v1)).toMatch(/older Blueprint that did not sign it/);
  });

  it("matches the repository's name whatever its case (GitHub names are case-insensitive)", () => {
    expect(readStateMarker(marker, { ...seal, repository: "Octo-Org/Widgets" }).kind).toBe("ok");
  });
});
