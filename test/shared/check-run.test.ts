import { describe, expect, it } from "vitest";
import {
  ACTION_LIMITS,
  checkRunExternalId,
  parseCheckRunExternalId,
  planCheckButtons,
  sameCheckRun,
} from "../../src/shared/check-run.js";

describe("Blueprint's check runs as GitHub shows them", () => {
  it("binds a check run to its thread and plan revision in the external id, and reads only that form back", () => {
    const id = checkRunExternalId({ kind: "plan", number: 12, revision: 3 });
    expect(id).toBe("blueprint-plan:#12:v3");
    expect(parseCheckRunExternalId(id)).toEqual({ kind: "plan", number: 12, revision: 3 });
    expect(parseCheckRunExternalId(checkRunExternalId({ kind: "build", number: 1, revision: 1 }))).toEqual({
      kind: "build",
      number: 1,
      revision: 1,
    });
    for (const other of [
      null,
      "",
      "lgtm|26764",
      "blueprint-plan:#12:v3 ",
      "blueprint-plan:12:v3",
      "blueprint-other:#1:v1",
      "blueprint-plan:#1:v",
      "blueprint-plan:#1:v1:",
      "blueprint-plan:#1:v1:0123456789ABCDEF",
      "blueprint-plan:#1:v1:0123456789abcdef0",
    ])
      expect(parseCheckRunExternalId(other)).toBeNull();
  });

  it("carries the hash of the plan a plan check shows, and finds a revision's check whatever hash it carries", () => {
    const id = checkRunExternalId({ kind: "plan", number: 12, revision: 3, planHash: "0123456789abcdef" });
    expect(id).toBe("blueprint-plan:#12:v3:0123456789abcdef");
    expect(parseCheckRunExternalId(id)).toEqual({
      kind: "plan",
      number: 12,
      revision: 3,
      planHash: "0123456789abcdef",
    });
    expect(sameCheckRun(id, "blueprint-plan:#12:v3")).toBe(true);
    expect(sameCheckRun("blueprint-plan:#12:v3", id)).toBe(true);
    expect(sameCheckRun(id, "blueprint-plan:#12:v4")).toBe(false);
    expect(sameCheckRun(id, "blueprint-build:#12:v3")).toBe(false);
    expect(sameCheckRun(id, "blueprint-plan:#13:v3:0123456789abcdef")).toBe(false);
    expect(sameCheckRun(null, "blueprint-plan:#12:v3")).toBe(false);
  });

  it("names the buttons `build` and `revise`, within GitHub's limits, for any revision", () => {
    expect(planCheckButtons(2).map((button) => [button.label, button.identifier])).toEqual([
      ["Build plan v2", "build"],
      ["Revise", "revise"],
    ]);
    for (const revision of [1, 99, 99_999_999, 123_456_789]) {
      const buttons = planCheckButtons(revision);
      expect(buttons.length).toBeLessThanOrEqual(ACTION_LIMITS.count);
      for (const button of buttons) {
        expect(button.label.length).toBeLessThanOrEqual(ACTION_LIMITS.label);
        expect(button.identifier.length).toBeLessThanOrEqual(ACTION_LIMITS.identifier);
        expect(button.description.length).toBeLessThanOrEqual(ACTION_LIMITS.description);
      }
    }
    expect(planCheckButtons(123_456_789)[0]?.label).toBe("Build this plan");
  });
});
