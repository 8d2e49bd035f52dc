import { describe, expect, it } from "vitest";
import { samplePlan } from "../helpers/model-server.js";
import { commentPayload } from "../helpers/app.js";
import { useAppFixture } from "../helpers/app-fixture.js";

const CODE = { "README.md": "# Hello\n", "src/client.js": "export const get = (url) => fetch(url);\n" };
const ALLOWED = { ...CODE, ".github/blueprint.yml": "models: [big-model, small-model]\n" };
const plan = samplePlan({ verification: [] });
const submit = (title = plan.title) => ({ toolCalls: [{ name: "submit_plan", arguments: { ...plan, title } }] });
const write = (path: string) => ({ toolCalls: [{ name: "write_file", arguments: { path, content: "x\n" } }] });
const complete = (id: string) => ({
  toolCalls: [{ name: "complete_step", arguments: { step_id: id, summary: `did ${id}` } }],
});

describe("/plan --model", () => {
  const fx = useAppFixture({ permissions: { maintainer: "write" } });
  const comment = (body: string) => fx.app.deliver("issue_comment", commentPayload({ body, cloneUrl: fx.repo.url }));
  const asked = () => fx.model.requests.map((request) => request.model);
  const lastBot = () => fx.github.botComments().at(-1)?.body ?? "";

  it("plans with a model from the repository's models:, keeps it for revisions and answers, and builds the plan with it", async () => {
    fx.createRepo(ALLOWED);
    const ask = { toolCalls: [{ name: "ask_user", arguments: { question: "Which client?" } }] };
    await fx.start([
      submit(),
      ask,
      submit("Smaller"),
      write("src/retry.js"),
      complete("S1"),
      write("src/client.js"),
      complete("S2"),
    ]);

    await comment("/plan --model big-model add retries\nKeep it small.");
    expect(asked()).toEqual(["big-model"]);
    // The model sees the instructions without the flag.
    const task = String(fx.model.requests[0]?.messages[1]?.content);
    expect(task).toContain("add retries\nKeep it small.");
    expect(task).not.toContain("--model");
    const v1 = lastBot();
    expect(fx.stateOf(v1)).toMatchObject({
      status: "pending",
      model: "big-model",
      instructions: "add retries\nKeep it small.",
    });
    expect(fx.visible(v1)).toContain("model `big-model` (`/plan --model`)");

    await comment("/status");
    expect(lastBot()).toContain("- Model: `big-model` (picked with `/plan --model`)");

    await comment("/revise smaller steps");
    await comment("the fetch wrapper");
    expect(fx.stateOf(lastBot())).toMatchObject({ revision: 2, status: "pending", model: "big-model" });

    await comment("/build");
    expect(fx.repo.log("blueprint/issue-1")).toEqual([
      "S2: Use the helper in the client",
      "S1: Add a retry helper",
      "initial commit",
    ]);
    expect(asked()).toEqual(Array(7).fill("big-model"));
  });

  it("a /plan without --model plans (and builds) with the configured model again", async () => {
    fx.createRepo(ALLOWED);
    await fx.start([submit(), submit("Again")]);
    await comment("/plan --model small-model add retries");
    await comment("/plan add retries");
    expect(asked()).toEqual(["small-model", "test-model"]);
    expect(fx.stateOf(lastBot())).toMatchObject({ revision: 2, model: null });
    expect(fx.visible(lastBot())).not.toContain("/plan --model");
  });

  it("refuses a model the list does not name, with the list, and asks no model anything", async () => {
    fx.createRepo(ALLOWED);
    await fx.start([]);
    await comment("/plan --model gpt-9-turbo add retries");
    expect(asked()).toEqual([]);
    const refusal = lastBot();
    expect(refusal).toContain("## ❌ Planning failed");
    expect(refusal).toContain(
      "`gpt-9-turbo` is not one of the models this repository allows (`models:` in `.github/blueprint.yml`): `big-model`, `small-model`.",
    );
    expect(refusal).toContain(
      "Comment `/plan --model NAME` with one of `big-model`, `small-model`, or `/plan` to plan with `test-model`.",
    );
  });

  it("without a models: list, refuses and says how to allow picking", async () => {
    fx.createRepo(CODE);
    await fx.start([]);
    await comment("/plan --model big-model add retries");
    expect(asked()).toEqual([]);
    expect(lastBot()).toContain(
      "`/plan --model big-model` cannot be used here: `.github/blueprint.yml` on the default branch has no `models:` list, so every plan uses `test-model`. To let people pick, list the models there, e.g. `models: [test-model, big-model]`.",
    );
  });

  it("does not build a plan whose model the list no longer names, and says why", async () => {
    fx.createRepo({ ...CODE, ".github/blueprint.yml": "models: [small-model]\n" });
    await fx.start([write("src/retry.js"), complete("S1")]);
    fx.seedPlan(plan, { model: "big-model" });
    await comment("/build");
    expect(asked()).toEqual([]);
    expect(fx.repo.log("main")).toEqual(["initial commit"]);
    expect(lastBot()).toContain(
      "`big-model` is not one of the models this repository allows (`models:` in `.github/blueprint.yml`): `small-model`. This plan was made with it, so it is not built.",
    );
  });

  it("answers `/plan --model` without a name with what to type, and runs nothing", async () => {
    fx.createRepo(ALLOWED);
    await fx.start([]);
    await comment("/plan --model");
    expect(asked()).toEqual([]);
    expect(lastBot()).toContain("`/plan --model` needs a model name, e.g. `/plan --model gpt-4.1 add retries`");
  });
});
