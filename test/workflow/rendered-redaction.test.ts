import { describe, expect, it } from "vitest";
import { deriveStateKey, readStateMarker } from "../../src/github/state-marker.js";
import { planCommentRenderer } from "../../src/workflow/build/status.js";
import { redactRendered } from "../../src/workflow/safe-port.js";
import { samplePlan } from "../helpers/model-server.js";
import { pendingState } from "../helpers/plan-state.js";

// A body a use case renders ends with its signed state marker, base64 of the compressed state. Redacting the whole
// body could hit a token-shaped run inside the marker and break it (the job then stops at its next save: "refusing to
// write a state marker … not in the expected format"). Only the text before the marker is redacted; the state's own
// strings are redacted by the safe port.
const seal = { key: deriveStateKey("a-test-secret"), repository: "octo/repo", thread: 1, comment: 2 };
/** A redactor that would break any marker it touched: every capital letter starred. */
const starCapitals = (text: string) => text.replace(/[A-Z]/g, "*");
const state = () => ({
  ...pendingState(samplePlan(), { base: { branch: "main", sha: "a".repeat(40) } }),
  status: "building" as const,
});

describe("redacting a rendered body", () => {
  it("leaves the state marker whole and redacts the text before it", () => {
    const body = planCommentRenderer({ redact: starCapitals }, state(), seal)("> Building S1");
    expect(readStateMarker(body, seal).kind).toBe("ok");
    expect(body).toContain("## 📋 *lan v1");
    expect(starCapitals(body)).not.toBe(body);
  });

  it("is the whole redactor's work on a body without a marker, and says where a broken one breaks", () => {
    expect(redactRendered(starCapitals, "Plain Text")).toBe("*lain *ext");
    const broken = starCapitals(planCommentRenderer({ redact: (text) => text }, state(), seal)());
    const read = readStateMarker(broken, seal);
    expect(read).toMatchObject({ kind: "corrupt" });
    expect(read.kind === "corrupt" && read.reason).toMatch(
      /^the state marker is not in the expected format \(an unexpected "\*" \d+ characters into it\)$/,
    );
  });
});
