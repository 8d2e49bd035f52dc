import { describe, expect, it } from "vitest";
import { parseCliArgs, UsageError } from "../../src/cli/args.js";
import { cliWording, markdownToText } from "../../src/cli/text-view.js";

describe("parseCliArgs", () => {
  it("joins the words of plan, revise and answer into one text", () => {
    expect(parseCliArgs(["plan", "add", "retry"]).command).toEqual({
      name: "plan",
      instructions: "add retry",
      newThread: false,
    });
    expect(parseCliArgs(["plan", "--new", "x"]).command).toEqual({ name: "plan", instructions: "x", newThread: true });
    expect(parseCliArgs(["revise", "smaller please"]).command).toEqual({ name: "revise", feedback: "smaller please" });
    expect(parseCliArgs(["answer", "use", "v2"]).command).toEqual({ name: "answer", text: "use v2" });
    expect(parseCliArgs(["cancel"]).command).toEqual({ name: "cancel" });
  });

  it("passes build's steps and flags on as the /build comment's words", () => {
    expect(parseCliArgs(["build", "S2", "S3", "--fresh", "--force"]).command).toEqual({
      name: "build",
      args: ["--fresh", "--force", "S2", "S3"],
    });
    // Words after the ids are notes, so the flags must not land after them.
    expect(parseCliArgs(["build", "S2", "keep the API", "--fresh"]).command).toEqual({
      name: "build",
      args: ["--fresh", "S2", "keep the API"],
    });
    expect(parseCliArgs(["build"]).command).toEqual({ name: "build", args: [] });
  });

  it("reads the model endpoint from flags", () => {
    expect(
      parseCliArgs(["plan", "x", "--base-url", "http://127.0.0.1:1/v1", "--api-key", "k", "--model", "m"]).model,
    ).toEqual({ baseUrl: "http://127.0.0.1:1/v1", apiKey: "k", model: "m" });
  });

  it("treats no command, `help` and --help alike", () => {
    for (const argv of [[], ["help"], ["--help"], ["build", "-h"]])
      expect(parseCliArgs(argv).command).toEqual({ name: "help" });
  });

  it("takes --max-cost in dollars, cents included, and refuses anything that is not an amount above 0", () => {
    for (const amount of ["0.50", "2", ".5", "12.345"])
      expect(parseCliArgs(["build", "--max-cost", amount]).limits).toEqual({ BLUEPRINT_MAX_COST: amount });
    for (const amount of ["0", "0.00", "-1", "$1", "1e3", "1.2.3", "five", "Infinity"]) {
      expect(() => parseCliArgs(["build", `--max-cost=${amount}`]), amount).toThrow(
        /`--max-cost` needs an amount in dollars above 0, e\.g\. --max-cost 0\.50/,
      );
    }
    expect(() => parseCliArgs(["build", "--max-cost"])).toThrow("`--max-cost` needs a value, e.g. --max-cost 0.50.");
  });

  it("refuses what it cannot do, saying why", () => {
    expect(() => parseCliArgs(["plan", "--fresh"])).toThrow(UsageError);
    expect(() => parseCliArgs(["build", "--new"])).toThrow(/--new only goes with `blueprint plan`/);
    expect(() => parseCliArgs(["status", "now"])).toThrow(/takes no arguments/);
    expect(() => parseCliArgs(["deploy"])).toThrow(/unknown command `deploy`/);
    expect(() => parseCliArgs(["plan", "--model"])).toThrow(UsageError);
  });
});

describe("terminal wording", () => {
  it("turns the App's advice into CLI commands", () => {
    expect(cliWording("Comment `/plan` to try again, or `/build --force`.")).toBe(
      "Run `blueprint plan` to try again, or `blueprint build --force`.",
    );
    expect(cliWording("then comment `/build` again")).toBe("then run `blueprint build` again");
    expect(cliWording("Answer in a comment and it resumes; `/cancel` withdraws it.")).toBe(
      'Answer with `blueprint answer "…"` and it resumes; `blueprint cancel` withdraws it.',
    );
  });

  it("drops the hidden state, HTML and heading marks from a comment", () => {
    const text = markdownToText(
      "## ❌ Planning failed\n\n**What to do:** fix it.\n\n<sub>12 tokens</sub>\n\n<!-- blueprint:state v1.abc.0123456789abcdef -->",
    );
    expect(text).toBe("❌ Planning failed\n\nWhat to do: fix it.\n\n12 tokens");
  });
});
