import { describe, expect, it } from "vitest";
import { buildNoteLines, recordBuildNote } from "../../src/workflow/build/notes.js";
import { threadStateSchema } from "../../src/workflow/state.js";
import { pendingState } from "../helpers/plan-state.js";
import { samplePlan } from "../helpers/model-server.js";

describe("build notes", () => {
  it("parses a state written before notes existed, with none", () => {
    const { buildNotes: _none, ...older } = threadStateSchema.parse(pendingState(samplePlan()));
    expect("buildNotes" in older).toBe(false);
    expect(threadStateSchema.parse(older).buildNotes).toEqual([]);
  });

  it("records each approver's words once, trimmed, and ignores empty ones", () => {
    const state = threadStateSchema.parse(pendingState(samplePlan()));
    recordBuildNote(state, { author: "ann", source: "build", text: "  keep the API stable \n" });
    recordBuildNote(state, { author: "ann", source: "build", text: "keep the API stable" });
    recordBuildNote(state, { author: "ben", source: "review", text: "   " });
    recordBuildNote(state, undefined);
    recordBuildNote(state, { author: "ben", source: "review", text: "use tabs" });
    expect(state.buildNotes).toEqual([
      { author: "ann", source: "build", text: "keep the API stable" },
      { author: "ben", source: "review", text: "use tabs" },
    ]);
  });

  it("shows a note as one quote in the report, without hidden comments that could swallow the rest of the comment", () => {
    const [line] = buildNoteLines([
      { author: "ann", source: "build", text: "first\n\nsecond <!-- hidden\nstill hidden" },
    ]);
    expect(line).toBe("**Notes from @ann** (with the `/build`), given to every step:\n> first\n> \n> second");
  });
});
