import { describe, expect, it } from "vitest";
import { parseComment, parsePlanArgument } from "../../src/github/command.js";

describe("parseComment", () => {
  it("takes /plan instructions from the first line and the lines after it", () => {
    expect(parseComment("/plan add retry\nto the HTTP client\n\nand log it")).toEqual({
      kind: "command",
      command: { name: "plan", instructions: "add retry\nto the HTTP client\n\nand log it" },
    });
  });

  it("accepts /plan without instructions", () => {
    expect(parseComment("/plan")).toEqual({ kind: "command", command: { name: "plan", instructions: "" } });
  });

  it("skips leading blank lines and normalises CRLF", () => {
    expect(parseComment("\n  \r\n/plan fix it\r\nsecond line\r\n")).toEqual({
      kind: "command",
      command: { name: "plan", instructions: "fix it\nsecond line" },
    });
  });

  it("is case-insensitive", () => {
    expect(parseComment("/PLAN Do It")).toEqual({ kind: "command", command: { name: "plan", instructions: "Do It" } });
    expect(parseComment("/Status")).toEqual({ kind: "command", command: { name: "status" } });
  });

  it("parses /build with a step id and --fresh", () => {
    expect(parseComment("/build S3 --fresh")).toEqual({
      kind: "command",
      command: { name: "build", steps: ["S3"], fresh: true, force: false, revision: null, notes: "" },
    });
  });

  it("parses comma-separated lower-case step ids and --force", () => {
    expect(parseComment("/build s1,s2 --force")).toEqual({
      kind: "command",
      command: { name: "build", steps: ["S1", "S2"], fresh: false, force: true, revision: null, notes: "" },
    });
  });

  it("parses a bare /build", () => {
    expect(parseComment("/build")).toEqual({
      kind: "command",
      command: { name: "build", steps: [], fresh: false, force: false, revision: null, notes: "" },
    });
  });

  it("parses /build with a plan revision", () => {
    expect(parseComment("/build v2 S1")).toEqual({
      kind: "command",
      command: { name: "build", steps: ["S1"], fresh: false, force: false, revision: 2, notes: "" },
    });
  });

  it("rejects /build with a flag it does not understand", () => {
    const parsed = parseComment("/build S2 --frsh");
    expect(parsed.kind).toBe("invalid");
    if (parsed.kind === "invalid") {
      expect(parsed.name).toBe("build");
      expect(parsed.message).toContain("--frsh");
    }
  });

  it("takes the words after the step ids and flags, and the lines below, as the build's notes", () => {
    expect(parseComment("/build S2 keep the public API stable")).toEqual({
      kind: "command",
      command: {
        name: "build",
        steps: ["S2"],
        fresh: false,
        force: false,
        revision: null,
        notes: "keep the public API stable",
      },
    });
    // Ids after the first note word are part of the note.
    expect(parseComment("/build --fresh, S1 but leave S3 alone\r\nAnd use tabs.")).toMatchObject({
      command: { steps: ["S1"], fresh: true, notes: "but leave S3 alone\nAnd use tabs." },
    });
    expect(parseComment("/build\n\nPlease keep the diff small.")).toMatchObject({
      command: { steps: [], notes: "Please keep the diff small." },
    });
  });

  it("rejects /revise without feedback", () => {
    const parsed = parseComment("/revise   ");
    expect(parsed).toMatchObject({ kind: "invalid", name: "revise" });
  });

  it("takes /revise feedback from later lines too", () => {
    expect(parseComment("/revise\nuse the existing helper")).toEqual({
      kind: "command",
      command: { name: "revise", feedback: "use the existing helper" },
    });
  });

  it.each(["cancel", "status", "help"] as const)("parses /%s", (name) => {
    expect(parseComment(`/${name}`)).toEqual({ kind: "command", command: { name } });
  });

  it("suggests the command for a transposed typo: /plna → plan", () => {
    expect(parseComment("/plna add retry")).toEqual({ kind: "typo", word: "plna", suggestion: "plan" });
  });

  it("suggests the command for near misses", () => {
    expect(parseComment("/biuld")).toMatchObject({ kind: "typo", suggestion: "build" });
    expect(parseComment("/pln")).toMatchObject({ kind: "typo", suggestion: "plan" });
  });

  it("ignores unrelated slash words", () => {
    expect(parseComment("/unrelated stuff")).toEqual({ kind: "none" });
    expect(parseComment("/deploy")).toEqual({ kind: "none" });
  });

  it("ignores text that does not start with /", () => {
    expect(parseComment("please /plan this")).toEqual({ kind: "none" });
    expect(parseComment("")).toEqual({ kind: "none" });
    expect(parseComment(null)).toEqual({ kind: "none" });
  });

  it("only looks at the first non-blank line", () => {
    expect(parseComment("Thanks!\n/plan add retry")).toEqual({ kind: "none" });
    expect(parseComment("\n\nLooks good\n\n/build")).toEqual({ kind: "none" });
  });
});

describe("/plan --model", () => {
  it("keeps the argument whole for the job, and splits it into the model and the instructions where the plan is made", () => {
    expect(parseComment("/plan --model gpt-5 add retry\nand log it")).toEqual({
      kind: "command",
      command: { name: "plan", instructions: "--model gpt-5 add retry\nand log it" },
    });
    expect(parsePlanArgument("--model gpt-5 add retry\nand log it")).toEqual({
      ok: true,
      model: "gpt-5",
      instructions: "add retry\nand log it",
    });
    expect(parsePlanArgument("--MODEL=qwen2.5-coder:14b")).toEqual({
      ok: true,
      model: "qwen2.5-coder:14b",
      instructions: "",
    });
    expect(parsePlanArgument("--model gpt-5\nadd retry")).toEqual({
      ok: true,
      model: "gpt-5",
      instructions: "add retry",
    });
  });

  it("reads --model only before the instructions: later it is part of them", () => {
    expect(parsePlanArgument("add a --model flag to the CLI")).toEqual({
      ok: true,
      model: null,
      instructions: "add a --model flag to the CLI",
    });
    expect(parsePlanArgument("--models-list cleanup")).toEqual({
      ok: true,
      model: null,
      instructions: "--models-list cleanup",
    });
  });

  it("refuses --model without a name, saying what to type", () => {
    for (const body of [
      "/plan --model",
      "/plan --model\nadd retry",
      "/plan --model= add retry",
      "/plan --model --fresh",
    ]) {
      expect(parseComment(body), body).toEqual({
        kind: "invalid",
        name: "plan",
        message: expect.stringContaining(
          "`/plan --model` needs a model name, e.g. `/plan --model gpt-4.1 add retries`",
        ),
      });
    }
  });
});
