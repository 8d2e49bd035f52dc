import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { decodeState } from "../helpers/plan-state.js";
import { createBareRepo, gitIn } from "../helpers/git-repo.js";
import { samplePlan, startModelServer, type ModelServer, type Script } from "../helpers/model-server.js";
import { assertCliBuilt, blueprint, readThread } from "./support.js";

const FILES = {
  "README.md": "# Hello\n",
  "src/client.js": "export async function get(url) {\n  return fetch(url);\n}\n",
};
const call = (name: string, args: Record<string, unknown>) => ({ toolCalls: [{ name, arguments: args }] });
const plan = samplePlan({
  verification: ["test -f src/retry.js"],
  steps: [{ id: "S1", title: "Add a retry helper", details: "Create src/retry.js", files: ["src/retry.js"], deps: [] }],
});

describe("blueprint fix", () => {
  let model: ModelServer | null = null;
  beforeAll(() => assertCliBuilt());
  afterEach(async () => {
    await model?.close();
    model = null;
  });

  async function withModel(script: Script) {
    const checkout = createBareRepo(FILES).seed;
    model = await startModelServer(script);
    const env = { OPENAI_BASE_URL: model.url, OPENAI_API_KEY: "sk-cli-test-key-000000000000000000000" };
    return { checkout, cli: (args: string[]) => blueprint(args, { cwd: checkout, env }) };
  }

  it("applies a follow-up to the built branch: an F-step committed on it, and the plan's Follow-up section", async () => {
    const { checkout, cli } = await withModel([
      call("submit_plan", plan),
      call("write_file", { path: "src/retry.js", content: "export const retry = (fn) => fn();\n" }),
      call("complete_step", { step_id: "S1", summary: "Added it." }),
      call("write_file", { path: "src/retry.js", content: "export const retry = (fn, attempts = 3) => fn();\n" }),
      call("complete_step", { step_id: "F1", summary: "Three attempts by default." }),
    ]);
    // Before the plan is built, there is nothing to follow up.
    expect((await cli(["plan", "add retry"])).code).toBe(0);
    const early = await cli(["fix", "retry three times"]);
    expect(early.code).toBe(1);
    expect(early.stdout + early.stderr).toContain("The plan is not built yet");

    expect((await cli(["build"])).code).toBe(0);
    const fixed = await cli(["fix", "retry three times"]);
    expect(fixed.code).toBe(0);
    const subjects = gitIn(checkout, ["log", "--format=%s", "main..blueprint/issue-1"]).trim().split("\n");
    expect(subjects).toHaveLength(2);
    expect(subjects[0]).toMatch(/^F1: `\/fix` by @\S+: retry three times$/);
    expect(subjects[1]).toBe("S1: Add a retry helper");
    expect(gitIn(checkout, ["show", "blueprint/issue-1:src/retry.js"])).toBe(
      "export const retry = (fn, attempts = 3) => fn();\n",
    );
    const planComment = readThread(checkout)
      .comments.filter((c) => c.own && c.body.includes("### Follow-up"))
      .at(-1);
    expect(planComment?.body).toMatch(/- \[x\] \*\*F1\*\*/);
    expect(decodeState(planComment?.body ?? "")).toMatchObject({ status: "built", followUp: { status: "built" } });
    // The task's first message carries the notes as a maintainer's words.
    expect(String(model?.requests.at(-2)?.messages[1]?.content)).toContain("retry three times");
  });
});
