import { describe, expect, it } from "vitest";
import { samplePlan } from "../helpers/model-server.js";
import { commentPayload } from "../helpers/app.js";
import { useAppFixture } from "../helpers/app-fixture.js";

const CODE = { "README.md": "# Hello\n", "src/client.js": "export const get = (url) => fetch(url);\n" };
/** test-model at $2 per million prompt tokens, $0.50 cached, $10 completion. */
const PRICES = "prices:\n  test-model: { input: 2, cached_input: 0.5, output: 10 }\n";
/** Each scripted request: 10,000 prompt + 1,000 completion tokens = $0.03 at PRICES. */
const USAGE = { prompt: 10_000, completion: 1_000, cached: 0 };
const write = (path: string, content: string) => ({
  toolCalls: [{ name: "write_file", arguments: { path, content } }],
  usage: USAGE,
});
const complete = (id: string) => ({
  toolCalls: [{ name: "complete_step", arguments: { step_id: id, summary: `did ${id}` } }],
  usage: USAGE,
});
const twoSteps = samplePlan({ verification: [] });

describe("cost in plans and builds", () => {
  const fx = useAppFixture({ permissions: { maintainer: "write" } });
  const planBody = (id: number) => fx.github.comments.find((comment) => comment.id === id)?.body ?? "";

  it("the plan comment shows what planning cost and an estimate for the build, labelled as one, with its basis and the cap", async () => {
    fx.createRepo({ ...CODE, ".github/blueprint.yml": `${PRICES}limits:\n  max_cost: 0.5\n` });
    await fx.start([
      {
        toolCalls: [{ name: "read_file", arguments: { path: "src/client.js" } }],
        usage: { prompt: 100_000, completion: 5_000, cached: 40_000 },
      },
      {
        toolCalls: [{ name: "submit_plan", arguments: samplePlan() }],
        usage: { prompt: 100_000, completion: 5_000, cached: 40_000 },
      },
    ]);
    await fx.app.deliver("issue_comment", commentPayload({ body: "/plan add retries", cloneUrl: fx.repo.url }));

    const body = fx.github.botComments()[0]?.body ?? "";
    expect(body).toMatch(/^## 📋 Plan v1: /);
    const shown = fx.visible(body);
    // (120,000 · $2 + 80,000 · $0.50 + 10,000 · $10) / 1M = $0.38
    expect(shown).toContain(
      "Planning: 200,000 prompt tokens (80,000 cached) + 10,000 completion tokens over 2 answered model requests — **$0.38** at `test-model`'s configured prices.",
    );
    // S1 is low with one file (60k + 20k), S2 unrated with one file (150k + 20k); 5% completion: (237,500 · $2 + 12,500
    // · $10) / 1M.
    expect(shown).toContain(
      "**Estimated build cost:** about 250,000 tokens for 2 steps (S1 ~80k, S2 ~170k), ≈ **$0.60** at `test-model`'s configured prices. Each `/build` is capped at $0.50. The estimate is over it: the build may stop at the cap",
    );
    expect(shown).toContain(
      "Estimate, not a measurement: it assumes 60,000 tokens for a low-complexity step, 150,000 for a medium or unrated one and 400,000 for a high one, plus 20,000 for each file a step names",
    );
    // The plan's contract markers are untouched.
    expect(body).toContain("- [ ] **S1** Add a retry helper");
    expect(body).toContain("<!-- blueprint:state");
  });

  it("without prices, the plan comment shows tokens and a token estimate, and says no price is configured and the cap cannot be enforced", async () => {
    fx.createRepo(CODE);
    await fx.start(
      [
        {
          toolCalls: [{ name: "submit_plan", arguments: samplePlan() }],
          usage: { prompt: 1_000, completion: 50, cached: 0 },
        },
      ],
      { BLUEPRINT_MAX_COST: "3" },
    );
    await fx.app.deliver("issue_comment", commentPayload({ body: "/plan add retries", cloneUrl: fx.repo.url }));

    const shown = fx.visible(fx.github.botComments()[0]?.body ?? "");
    expect(shown).toContain(
      "Planning: 1,000 prompt tokens (0 cached) + 50 completion tokens over 1 answered model request; no price is configured for `test-model`, so no cost is shown.",
    );
    expect(shown).toContain(
      "**Estimated build cost:** about 250,000 tokens for 2 steps (S1 ~80k, S2 ~170k) (no price is configured for `test-model`). A cost cap of $3.00 per build is set, but it cannot be enforced without a price for `test-model`.",
    );
  });

  it("the build report and the pull request show each step's tokens and cost, and the total", async () => {
    fx.createRepo({ ...CODE, ".github/blueprint.yml": PRICES });
    await fx.start([
      write("src/retry.js", "x\n"),
      complete("S1"),
      write("src/client.js", "y\n"),
      write("README.md", "z\n"),
      complete("S2"),
    ]);
    const plan = fx.seedPlan(twoSteps);
    await fx.app.deliver("issue_comment", commentPayload({ body: "/build", cloneUrl: fx.repo.url }));

    expect(fx.repo.log("blueprint/issue-1")).toEqual([
      "S2: Use the helper in the client",
      "S1: Add a retry helper",
      "initial commit",
    ]);
    const table = [
      "#### Cost",
      "",
      "| Step | Tokens | Prompt | Completion | Cost |",
      "|---|--:|--:|--:|--:|",
      "| S1 | 22,000 | 20,000 (0 cached) | 2,000 | $0.06 |",
      "| S2 | 33,000 | 30,000 (0 cached) | 3,000 | $0.09 |",
      "| **Total** | 55,000 | 50,000 (0 cached) | 5,000 | $0.15 |",
    ].join("\n");
    expect(fx.visible(planBody(plan.id))).toContain(table);
    // If this ever fails again (it did once under a full suite's load), the plan comment says what happened.
    expect(fx.github.pulls[0]?.body, `no pull request; plan comment:\n${fx.visible(planBody(plan.id))}`).toContain(
      table,
    );
    expect(fx.github.pulls[0]?.body).toContain(
      "This build: 50,000 prompt tokens (0 cached) + 5,000 completion tokens over 5 answered model requests — **$0.15**",
    );
    const steps = fx.stateOf(planBody(plan.id)).steps;
    expect(steps.S1?.usage).toEqual({ prompt: 20_000, completion: 2_000, cached: 0, requests: 2 });
    expect(steps.S2?.usage).toEqual({ prompt: 30_000, completion: 3_000, cached: 0, requests: 3 });
  });

  it("max_cost stops the build between steps with everything built pushed; a later /build resumes at the next step", async () => {
    // The App's cap is $5; the repository lowers it to $0.05. S1 costs $0.06, so the build stops before S2.
    fx.createRepo({ ...CODE, ".github/blueprint.yml": `${PRICES}limits:\n  max_cost: 0.05\n` });
    await fx.start([write("src/retry.js", "x\n"), complete("S1"), write("src/client.js", "y\n"), complete("S2")], {
      BLUEPRINT_MAX_COST: "5",
    });
    const plan = fx.seedPlan(twoSteps);
    await fx.app.deliver("issue_comment", commentPayload({ body: "/build", cloneUrl: fx.repo.url }));

    expect(fx.repo.log("blueprint/issue-1")).toEqual(["S1: Add a retry helper", "initial commit"]);
    expect(fx.model.requests).toHaveLength(2);
    expect(fx.github.pulls).toHaveLength(0);
    const stopped = planBody(plan.id);
    expect(fx.visible(stopped)).toContain(
      "> ❌ **Build stopped:** the build reached its cost cap of $0.05 ($0.06 spent); S2 not built yet. Comment `/build` to resume",
    );
    expect(fx.visible(stopped)).toContain(
      "💰 **Cost cap hit:** this build spent $0.06 of its $0.05 and stopped before S2.",
    );
    // The App sets no prices: its cap is counted at the repository's, and the report says who sets them.
    expect(fx.visible(stopped)).toContain(
      "The App's cost cap of $5.00 is counted at this repository's own `prices:`, since the App sets none (BLUEPRINT_PRICES)",
    );
    expect(fx.visible(stopped)).toContain("- [x] **S1**");
    expect(fx.visible(stopped)).toContain("- [ ] **S2**");
    const state = fx.stateOf(stopped);
    expect(state.status).toBe("failed");
    expect(state.steps.S1?.status).toBe("done");
    expect(state.steps.S2?.status).toBe("pending");

    await fx.app.deliver("issue_comment", commentPayload({ body: "/build", cloneUrl: fx.repo.url, commentId: 2002 }));
    expect(fx.repo.log("blueprint/issue-1")).toEqual([
      "S2: Use the helper in the client",
      "S1: Add a retry helper",
      "initial commit",
    ]);
    // Only S2 ran again; the report still prices S1 from the first build.
    expect(fx.model.requests).toHaveLength(4);
    expect(fx.github.pulls[0]?.body).toContain("| S1 | 22,000 | 20,000 (0 cached) | 2,000 | $0.06 |");
    expect(fx.github.pulls[0]?.body).toContain("| **Total** | 44,000 | 40,000 (0 cached) | 4,000 | $0.12 |");
    expect(fx.stateOf(planBody(plan.id)).status).toBe("built");
  });

  it("a repository cannot raise the App's cap, and a step that reaches the cap mid-run stops like the token limit: not ticked, its work kept", async () => {
    fx.createRepo({ ...CODE, ".github/blueprint.yml": `${PRICES}limits:\n  max_cost: 100\n` });
    // $0.03 per request: the third request of S1 would start at $0.06, past the App's $0.05.
    await fx.start([write("src/retry.js", "x\n"), write("src/other.js", "o\n"), complete("S1")], {
      BLUEPRINT_MAX_COST: "0.05",
    });
    const plan = fx.seedPlan(twoSteps);
    await fx.app.deliver("issue_comment", commentPayload({ body: "/build", cloneUrl: fx.repo.url }));

    expect(fx.model.requests).toHaveLength(2);
    expect(fx.repo.log("blueprint/issue-1")).toEqual([
      "WIP S1 (failed, not done): Add a retry helper",
      "initial commit",
    ]);
    const state = fx.stateOf(planBody(plan.id));
    expect(state.status).toBe("failed");
    expect(state.steps.S1).toMatchObject({ status: "failed", reason: "the build reached its cost cap of $0.05" });
    expect(fx.visible(planBody(plan.id))).toContain("- [ ] **S1**");
  });

  it("a repository cannot slip under the App's cap by picking a model the App has no price for and pricing it at nothing", async () => {
    // The App caps builds at $0.05 at its own prices; the repository asks for another name of the
    // model and says that name is free. Counted at $0 the cap would never stop the build; counted at
    // the App's dearest price ($0.03 a request), it stops before S2.
    const free = "model: test-model-latest\nprices:\n  test-model-latest: { input: 0, output: 0 }\n";
    const app = {
      BLUEPRINT_MAX_COST: "0.05",
      BLUEPRINT_PRICES: JSON.stringify({ "test-model": { input: 2, output: 10 } }),
    };
    fx.createRepo({ ...CODE, ".github/blueprint.yml": free });
    await fx.start([write("src/retry.js", "x\n"), complete("S1"), write("src/client.js", "y\n"), complete("S2")], app);
    const plan = fx.seedPlan(twoSteps);
    await fx.app.deliver("issue_comment", commentPayload({ body: "/build", cloneUrl: fx.repo.url }));

    expect(fx.model.requests[0]?.model).toBe("test-model-latest");
    expect(fx.repo.log("blueprint/issue-1")).toEqual(["S1: Add a retry helper", "initial commit"]);
    expect(fx.github.pulls).toHaveLength(0);
    expect(fx.visible(planBody(plan.id))).toContain(
      "💰 **Cost cap hit:** this build spent $0.06 of its $0.05 and stopped before S2.",
    );
    expect(fx.visible(planBody(plan.id))).toContain(
      "The cost cap of $0.05 is counted at the App's dearest prices: the App has no price for `test-model-latest`.",
    );
  });

  it("the plan comment counts the estimate against the App's cap at the App's prices, not the repository's", async () => {
    fx.createRepo({
      ...CODE,
      ".github/blueprint.yml": "model: test-model-latest\nprices:\n  test-model-latest: { input: 0, output: 0 }\n",
    });
    await fx.start(
      [
        {
          toolCalls: [{ name: "submit_plan", arguments: samplePlan() }],
          usage: { prompt: 1_000, completion: 50, cached: 0 },
        },
      ],
      {
        BLUEPRINT_MAX_COST: "0.05",
        BLUEPRINT_PRICES: JSON.stringify({ "test-model": { input: 2, output: 10 } }),
      },
    );
    await fx.app.deliver("issue_comment", commentPayload({ body: "/plan add retries", cloneUrl: fx.repo.url }));

    const shown = fx.visible(fx.github.botComments()[0]?.body ?? "");
    expect(shown).toContain(
      "Each `/build` is capped at $0.05, counted at the App's dearest prices (it has none for `test-model-latest`). The estimate is over it: the build may stop at the cap",
    );
  });

  it("with max_cost but no price for the model, the build runs on tokens alone and the report says the cap cannot be enforced", async () => {
    fx.createRepo({ ...CODE, ".github/blueprint.yml": "limits:\n  max_cost: 0.01\n" });
    await fx.start([write("src/retry.js", "x\n"), complete("S1"), write("src/client.js", "y\n"), complete("S2")]);
    const plan = fx.seedPlan(twoSteps);
    await fx.app.deliver("issue_comment", commentPayload({ body: "/build", cloneUrl: fx.repo.url }));

    expect(fx.repo.log("blueprint/issue-1")).toEqual([
      "S2: Use the helper in the client",
      "S1: Add a retry helper",
      "initial commit",
    ]);
    const report = fx.github.pulls[0]?.body ?? "";
    expect(report).toContain(
      "> ⚠️ The cost cap of $0.01 per build cannot be enforced: no price is configured for `test-model`",
    );
    expect(report.match(/cannot be enforced/g)).toHaveLength(1);
    expect(report).toContain(
      "| Step | Tokens | Prompt | Completion |\n|---|--:|--:|--:|\n| S1 | 22,000 | 20,000 (0 cached) | 2,000 |",
    );
    expect(report).toContain("No price is configured for `test-model`");
    expect(report).not.toContain("| Cost |");
    expect(fx.stateOf(planBody(plan.id)).status).toBe("built");
  });
});
