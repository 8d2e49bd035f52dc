import { createHmac } from "node:crypto";
import { deflateRawSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { MARKER_PREFIX, encodeStateMarker, readStateMarker, type MarkerRead } from "../../src/github/state-marker.js";
import { validatePlan } from "../../src/plan/validate.js";
import { planHash } from "../../src/plan/hash.js";
import type { Plan } from "../../src/plan/schema.js";
import { threadStateSchema, type ThreadState } from "../../src/workflow/state.js";
import { testSeal } from "../helpers/plan-state.js";

const RUNS = 2000;

// ---- generators -------------------------------------------------------------------------------

/** Characters that stress JSON, base64 and HTML comments; drawn from a list because it is fast. */
const trickyChar = fc.constantFrom(
  ..."aZ09 _-.\\\"'`<>&{}[]:,",
  "\n",
  "\r",
  "\t",
  "\u0000",
  "\u2028",
  "é",
  "ß",
  "中",
  "😀",
  "\u{10ffff}",
  "-->",
  "<!--",
  "\ufeff",
);
const anyText = fc.oneof(
  { weight: 3, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string({ unit: trickyChar, maxLength: 30 }) },
  { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 12 }) },
);
const someText = anyText.filter((text) => text.trim() !== "");
const fileSegment = fc.stringMatching(/^[a-z0-9_-]{1,10}(\.[a-z]{1,3})?$/);
const repoFile = fc.array(fileSegment, { minLength: 1, maxLength: 4 }).map((parts) => parts.join("/"));
const sha = fc.uint8Array({ minLength: 20, maxLength: 20 }).map((bytes) => Buffer.from(bytes).toString("hex"));

/** A plan as the model would send it: acyclic (deps point at steps generated earlier), then shuffled. */
const planInput = fc.integer({ min: 1, max: 12 }).chain((count) =>
  fc
    .record({
      title: someText,
      summary: someText,
      numbers: fc.uniqueArray(fc.integer({ min: 0, max: 999 }), { minLength: count, maxLength: count }),
      order: fc.shuffledSubarray([...Array(count).keys()], { minLength: count, maxLength: count }),
      steps: fc.array(
        fc.record({
          title: someText,
          details: anyText,
          files: fc.array(repoFile, { maxLength: 3 }),
          depPicks: fc.array(fc.nat(), { maxLength: 3 }),
          risk: fc.oneof(fc.constant(undefined), fc.constant(null), anyText),
          complexity: fc.constantFrom(undefined, null, "low", "medium", "high"),
        }),
        { minLength: count, maxLength: count },
      ),
      risks: fc.array(someText, { maxLength: 3 }),
      verification: fc.array(someText, { maxLength: 3 }),
      questions: fc.option(fc.array(someText, { maxLength: 2 }), { nil: null }),
    })
    .map(({ numbers, order, steps, ...plan }) => {
      const ids = numbers.map((n) => `S${n}`);
      const built = steps.map(({ depPicks, ...step }, index) => ({
        ...step,
        id: ids[index],
        deps: index === 0 ? [] : [...new Set(depPicks.map((pick) => ids[pick % index]))],
      }));
      return { ...plan, steps: order.map((index) => built[index]) };
    }),
);

/** Plans go through validatePlan, as they do in the app, so the state holds what Blueprint would store. */
const validPlan = planInput.map((input): Plan => {
  const checked = validatePlan(input);
  if (!checked.ok) throw new Error(`generator made an invalid plan: ${checked.errors.join("; ")}`);
  return checked.plan;
});

const stepProgress = fc.record(
  {
    status: fc.constantFrom("pending", "building", "done", "failed"),
    commit: sha,
    commitUrl: anyText,
    reason: anyText,
    tickedByHand: fc.boolean(),
    summary: anyText,
    held: fc.record({ commit: sha, ref: anyText }),
    outsidePlan: fc.record({ files: fc.array(anyText, { maxLength: 3 }), total: fc.nat() }),
  },
  { requiredKeys: ["status"] },
);
const nullable = <T>(arbitrary: fc.Arbitrary<T>) => fc.option(arbitrary, { nil: null });

const threadState: fc.Arbitrary<ThreadState> = fc
  .tuple(
    nullable(validPlan),
    fc.record({
      status: fc.constantFrom(
        "planning",
        "pending",
        "awaiting_answer",
        "building",
        "built",
        "failed",
        "superseded",
        "cancelled",
      ),
      revision: fc.integer({ min: 1, max: 10_000 }),
      requestedBy: anyText,
      instructions: anyText,
      base: fc.record({ branch: anyText, sha }),
      head: nullable(fc.record({ ref: anyText, sha, sameRepo: fc.boolean() })),
      planHead: nullable(sha),
      branch: nullable(anyText),
      extraSteps: fc.dictionary(fc.string({ maxLength: 8 }), stepProgress, { maxKeys: 3 }),
      progress: fc.array(stepProgress, { minLength: 12, maxLength: 12 }),
      stale: nullable(anyText),
      question: nullable(anyText),
      error: nullable(anyText),
      pullRequest: nullable(fc.integer({ min: 1, max: 1_000_000 })),
      followUp: fc.constant(null),
      explored: fc.array(anyText, { maxLength: 4 }),
      feedback: fc.array(
        fc.record({
          author: anyText,
          source: fc.constantFrom("revise", "plan", "review", "comment"),
          text: anyText,
          onRevision: fc.integer(),
        }),
        { maxLength: 3 },
      ),
      answers: fc.array(fc.record({ question: anyText, answer: anyText, author: anyText }), { maxLength: 2 }),
      questionMode: fc.constantFrom(null, "plan", "build"),
      questionStep: nullable(anyText),
      approvedBy: nullable(anyText),
      approvedOn: nullable(fc.record({ base: nullable(anyText), head: nullable(anyText) })),
      approvals: fc.array(
        fc.record({ login: anyText, via: fc.constantFrom("build", "review"), at: nullable(anyText) }),
        { maxLength: 3 },
      ),
      buildDeliveries: fc.array(anyText, { maxLength: 3 }),
      buildNotes: fc.array(fc.record({ author: anyText, source: fc.constantFrom("build", "review"), text: anyText }), {
        maxLength: 2,
      }),
      changes: nullable(anyText),
      instructionFiles: fc.array(anyText, { maxLength: 3 }),
      model: nullable(anyText),
      postedAt: nullable(fc.date({ noInvalidDate: true }).map((date) => date.toISOString())),
      updatedAt: fc.date({ noInvalidDate: true }).map((date) => date.toISOString()),
    }),
  )
  .map(([plan, { extraSteps, progress, ...rest }]) => ({
    v: 1 as const,
    ...rest,
    plan,
    planHash: plan ? planHash(plan) : null,
    steps: {
      ...extraSteps,
      ...Object.fromEntries(
        (plan?.steps ?? []).map((step, index) => [step.id, progress[index] ?? { status: "pending" }]),
      ),
    },
  }));

const MARKER = /^(<!-- blueprint:state v2\.)([A-Za-z0-9_-]*)\.([A-Za-z0-9_-]{43})( -->)$/;
const seal = testSeal(4321, 12, "octo-org/widgets");
const NOISE_CHARS = [..."AZaz09_-.+/= !é😀", "\n", "-->", "<!--"];

type Corruption =
  | { kind: "flip"; at: number; char: string }
  | { kind: "insert"; at: number; char: string }
  | { kind: "delete"; at: number }
  | { kind: "truncate"; at: number };

const corruption: fc.Arbitrary<Corruption> = fc.oneof(
  fc.record({ kind: fc.constant("flip" as const), at: fc.nat(), char: fc.constantFrom(...NOISE_CHARS) }),
  fc.record({ kind: fc.constant("insert" as const), at: fc.nat(), char: fc.constantFrom(...NOISE_CHARS) }),
  fc.record({ kind: fc.constant("delete" as const), at: fc.nat() }),
  fc.record({ kind: fc.constant("truncate" as const), at: fc.nat() }),
);

/** Applies a corruption inside the payload-and-checksum part of a marker (truncation anywhere). */
function corrupt(marker: string, change: Corruption): string {
  const match = MARKER.exec(marker);
  if (!match) throw new Error("not a marker");
  const start = (match[1] ?? "").length;
  const end = marker.length - (match[4] ?? "").length;
  const at = start + (change.at % (end - start));
  switch (change.kind) {
    case "flip": {
      const char = change.char === marker[at] ? "~" : change.char;
      return marker.slice(0, at) + char + marker.slice(at + 1);
    }
    case "insert":
      return marker.slice(0, at) + change.char + marker.slice(at);
    case "delete":
      return marker.slice(0, at) + marker.slice(at + 1);
    case "truncate":
      return marker.slice(0, change.at % marker.length);
  }
}

function expectWellFormed(read: MarkerRead): void {
  expect(["none", "ok", "corrupt"]).toContain(read.kind);
  if (read.kind === "corrupt") expect(read.reason.trim().length).toBeGreaterThan(0);
  if (read.kind === "ok") expect(threadStateSchema.safeParse(read.state).success).toBe(true);
}

/** The v2 signature, written out from the format: HMAC-SHA256 over the version, the binding and the payload. */
const signatureOf = (payload: string) =>
  createHmac("sha256", seal.key)
    .update(["blueprint:state v2", seal.repository, String(seal.thread), String(seal.comment), payload].join("\n"))
    .digest("base64url");
/** A well-formed, correctly signed marker around any value: encodeStateMarker serialises whatever it is given. */
const markerHolding = (value: unknown) => encodeStateMarker(value as ThreadState, seal);
/** A correctly signed marker around raw bytes (deflate-raw, base64url, signature of the payload). */
const markerOfBytes = (bytes: Uint8Array) => {
  const payload = deflateRawSync(bytes).toString("base64url");
  return `${MARKER_PREFIX} v2.${payload}.${signatureOf(payload)} -->`;
};

// ---- properties -------------------------------------------------------------------------------

describe("readStateMarker on arbitrary input", () => {
  it("never throws on arbitrary text", () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: "binary" }), fc.string({ unit: "grapheme" })), (body) => {
        const read = readStateMarker(body, seal);
        expectWellFormed(read);
        if (!body.includes(MARKER_PREFIX)) expect(read).toEqual({ kind: "none" });
      }),
      { numRuns: RUNS },
    );
  });

  it("never throws on text that looks like a marker, and never accepts a random one", () => {
    const markerish = fc
      .tuple(
        anyText,
        fc.constantFrom(" v1.", " v1", " v2.", "v2.", " v2..", " v3."),
        fc.string({ unit: fc.constantFrom(..."ABCxyz019_-=+/."), maxLength: 80 }),
        fc.constantFrom(".", "", ".."),
        fc.string({ unit: fc.constantFrom(..."0123456789abcdefABCDEF_-"), maxLength: 50 }),
        fc.constantFrom(" -->", "-->", "", " --"),
        anyText,
      )
      .map(
        ([before, version, payload, dot, sum, close, after]) =>
          `${before}${MARKER_PREFIX}${version}${payload}${dot}${sum}${close}${after}`,
      );
    fc.assert(
      fc.property(markerish, (body) => {
        const read = readStateMarker(body, seal);
        expectWellFormed(read);
        expect(read.kind).toBe("corrupt");
      }),
      { numRuns: RUNS },
    );
  });

  it("reports JSON that is not a Blueprint state as corrupt, even with a correct signature", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const read = readStateMarker(`some text\n\n${markerHolding(value)}`, seal);
        expect(read.kind).toBe("corrupt");
        expectWellFormed(read);
      }),
      { numRuns: RUNS },
    );
  });

  it("reports bytes that are not JSON as corrupt, even with a correct signature", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), (bytes) => {
        const read = readStateMarker(markerOfBytes(bytes), seal);
        expect(read.kind).toBe("corrupt");
        expectWellFormed(read);
      }),
      { numRuns: RUNS },
    );
  });

  it("refuses a marker that inflates to far more than a state, quickly", () => {
    fc.assert(
      fc.property(fc.integer({ min: 3, max: 16 }), fc.constantFrom(0x20, 0x7b, 0x30), (megabytes, byte) => {
        const read = readStateMarker(markerOfBytes(new Uint8Array(megabytes * 1024 * 1024).fill(byte)), seal);
        expect(read.kind).toBe("corrupt");
      }),
      { numRuns: 10 },
    );
  });
});

describe("state marker round trip", () => {
  it("reads back exactly the state that was encoded, wherever the marker sits in the comment", () => {
    fc.assert(
      fc.property(threadState, anyText, (state, before) => {
        fc.pre(!before.includes(MARKER_PREFIX));
        const marker = encodeStateMarker(state, seal);
        expect(marker.startsWith(MARKER_PREFIX)).toBe(true);
        expect(marker.indexOf("-->")).toBe(marker.length - 3); // nothing in the payload closes the comment early
        expect(readStateMarker(marker, seal)).toEqual({ kind: "ok", state });
        expect(readStateMarker(`${before}\n\n${marker}`, seal)).toEqual({ kind: "ok", state });
      }),
      { numRuns: 400 },
    );
  });

  it("never reads a marker as valid in any other comment, thread or repository", () => {
    fc.assert(
      fc.property(
        threadState,
        fc.integer({ min: 1, max: 2 ** 40 }),
        fc.integer({ min: 1, max: 100_000 }),
        fc.string({ minLength: 1, maxLength: 20 }),
        (state, comment, thread, repository) => {
          fc.pre(comment !== seal.comment || thread !== seal.thread || repository.toLowerCase() !== seal.repository);
          const read = readStateMarker(encodeStateMarker(state, seal), { ...seal, comment, thread, repository });
          expect(read.kind).toBe("corrupt");
        },
      ),
      { numRuns: 300 },
    );
  });

  it("takes the last marker when a comment holds several", () => {
    fc.assert(
      fc.property(threadState, threadState, (older, newer) => {
        const body = `${encodeStateMarker(older, seal)}\n\ntext\n\n${encodeStateMarker(newer, seal)}`;
        expect(readStateMarker(body, seal)).toEqual({ kind: "ok", state: newer });
      }),
      { numRuns: 200 },
    );
  });

  it("never returns a state other than the original from a corrupted marker", () => {
    // Several corruptions per generated state: 300 states × 8 = 2,400 corrupted markers.
    fc.assert(
      fc.property(
        threadState,
        fc.array(corruption, { minLength: 8, maxLength: 8 }),
        anyText,
        (state, changes, after) => {
          fc.pre(!after.includes(MARKER_PREFIX));
          const marker = encodeStateMarker(state, seal);
          for (const change of changes) {
            const read = readStateMarker(`## Plan v1\n\n${corrupt(marker, change)}${after}`, seal);
            expectWellFormed(read);
            if (read.kind === "ok") expect(read.state).toEqual(state);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it("detects a plan edited inside the marker, even when the marker was re-signed", () => {
    const withPlan = threadState.filter((state) => state.plan !== null);
    fc.assert(
      fc.property(withPlan, someText, (state, newTitle) => {
        const plan = state.plan;
        fc.pre(plan !== null && newTitle.trim() !== plan.title);
        const edited = { ...state, plan: { ...plan, title: newTitle.trim() } };
        const read = readStateMarker(encodeStateMarker(edited, seal), seal);
        expect(read.kind).toBe("corrupt");
        if (read.kind === "corrupt") expect(read.reason).toMatch(/hash/);
      }),
      { numRuns: 300 },
    );
  });
});
