import { describe, expect, it } from "vitest";
import { samplePlan, type Script } from "../helpers/model-server.js";
import { checkSuitePayload, commentPayload, settle, startTestApp } from "../helpers/app.js";
import { stateOf, useAppFixture, visible } from "../helpers/app-fixture.js";
import { APP_ID } from "../helpers/github-double.js";

const FILES = {
  "README.md": "# Hello\n",
  "src/client.js": "export async function get(url) {\n  return fetch(url);\n}\n",
};
const BRANCH = "blueprint/issue-1";
const ACTIONS = { id: 15368, slug: "github-actions" };
const LOG = ["##[group]Run npm test", "> vitest run", ...Array.from({ length: 300 }, (_, i) => `ok ${i}`)].join("\n");
const FAILED_LOG = `${LOG}\nFAIL test/retry.test.js > retries three times\nError: expected 3 attempts, got 1\n`;

const onePlan = samplePlan({
  verification: ["test -f src/retry.js"],
  steps: [{ id: "S1", title: "Add a retry helper", details: "Create src/retry.js", files: ["src/retry.js"], deps: [] }],
});
const call = (name: string, args: Record<string, unknown>) => ({ toolCalls: [{ name, arguments: args }] });
/** The build of F1: three attempts. */
const fixF1 = [
  call("write_file", { path: "src/retry.js", content: "export const retry = (fn, n = 3) => fn();\n" }),
  call("complete_step", { step_id: "F1", summary: "Three attempts." }),
];
/** The model's read-only diagnosis of the failing test: one fix-up step. */
const diagnosis = call(
  "submit_plan",
  samplePlan({
    title: "retry makes one attempt",
    summary: "`retry` calls the function once, and the test expects three attempts.",
    steps: [{ id: "S1", title: "Retry three times", details: "Call `fn` up to `n` times.", files: ["src/retry.js"] }],
    verification: [],
  }),
);

describe("failing checks on Blueprint's pull request", () => {
  const fx = useAppFixture({ files: FILES });

  async function builtPullRequest(script: Script, config?: string) {
    if (config) fx.createRepo({ ...FILES, ".github/blueprint.yml": config });
    await fx.start([
      call("write_file", { path: "src/retry.js", content: "export const retry = (fn) => fn();\n" }),
      call("complete_step", { step_id: "S1", summary: "Added it." }),
      ...script,
    ]);
    const plan = fx.seedPlan(onePlan);
    await fx.app.deliver("issue_comment", commentPayload({ body: "/build", cloneUrl: fx.repo.url }));
    const pull = fx.github.pulls[0]!;
    pull.headSha = fx.repo.head(BRANCH);
    return { plan, pull };
  }

  /** The `test` job of GitHub Actions failed on `sha`, with an annotation and its log. */
  const failTests = (sha: string, message = "expected 3 attempts, got 1") =>
    fx.github.addCheckRun({
      name: "test",
      head_sha: sha,
      external_id: null,
      app: ACTIONS,
      conclusion: "failure",
      output: { title: "1 test failed", summary: "retries three times" },
      annotations: [{ path: "src/retry.js", start_line: 1, title: "retries three times", message }],
      log: FAILED_LOG,
    });
  const suiteFailed = (sha: string, options: { app?: { id: number; slug: string }; pullRequest?: number } = {}) =>
    checkSuitePayload({
      headSha: sha,
      headBranch: BRANCH,
      pullRequest: options.pullRequest ?? 100,
      cloneUrl: fx.repo.url,
      ...(options.app ? { app: options.app } : {}),
    });
  const onPullRequest = () => fx.github.otherComments.filter((c) => c.number === 100).map((c) => c.body);

  it("`ci_fix: build` fixes a failing check on the same branch, then stops at the same failure on its own fix", async () => {
    const { pull, plan } = await builtPullRequest([diagnosis, ...fixF1], "ci_fix: build\n");
    failTests(pull.headSha!);
    const first = suiteFailed(pull.headSha!);
    await fx.app.deliver("check_suite", first, "suite-1");

    expect(fx.repo.log(BRANCH).slice(0, 2)).toEqual(["F1: Retry three times", "S1: Add a retry helper"]);
    // The checks' words reach the model as untrusted data: the annotation and the end of the job's log, capped.
    const task = String(fx.model.requests.at(-2)?.messages[1]?.content);
    expect(task).toContain('<untrusted_input check="test">');
    expect(task).toContain("Error: expected 3 attempts, got 1");
    expect(task).toContain("src/retry.js:1");
    expect(task).not.toContain("ok 10\n");
    expect(fx.github.requests.some((r) => r.path.startsWith("https://pipelines.actions.example/logs/"))).toBe(true);
    expect(onPullRequest().at(-1)).toContain("Building **F1** to fix it (attempt 1 of 2).");
    const fix = fx.repo.head(BRANCH);
    expect(stateOf(fx.github.comments.find((c) => c.id === plan.id)!.body).followUp?.ci).toMatchObject({
      attempts: 1,
      fixes: [{ pushed: fix }],
    });

    // The fix fails the same way: no second attempt, and the pull request is told why.
    pull.headSha = fix;
    failTests(fix);
    const requests = fx.model.requests.length;
    await fx.app.deliver("check_suite", suiteFailed(fix));
    expect(fx.model.requests).toHaveLength(requests);
    expect(fx.repo.head(BRANCH)).toBe(fix);
    expect(onPullRequest().at(-1)).toContain(
      `Blueprint stopped: commit \`${fix.slice(0, 7)}\` was its fix for this very failure`,
    );

    // The first suite delivered again to a restarted app (no delivery memory): nothing twice.
    const comments = onPullRequest().length;
    const restarted = await startTestApp({ OPENAI_BASE_URL: fx.model.url });
    await restarted.deliver("check_suite", suiteFailed(fix), "suite-again");
    expect(onPullRequest()).toHaveLength(comments);
    expect(fx.model.requests).toHaveLength(requests);
  });

  it("`ci_fix: suggest` (the default) comments with the model's F-step for `/fix`; the base branch's own failure is not fixed", async () => {
    const { pull } = await builtPullRequest([
      diagnosis,
      call("write_file", { path: "src/retry.js", content: "export const retry = (fn, n = 3) => fn();\n" }),
      call("complete_step", { step_id: "F1", summary: "Three attempts." }),
    ]);
    failTests(pull.headSha!);
    await fx.app.deliver("check_suite", suiteFailed(pull.headSha!));
    expect(fx.repo.log(BRANCH)[0]).toBe("S1: Add a retry helper");
    expect(onPullRequest().at(-1)).toMatch(
      /A check fails on this pull request's head[\s\S]*\*\*test\*\*: 1 test failed/,
    );
    expect(onPullRequest().at(-1)).toContain("**F1** (Retry three times) waits in the plan comment");
    const planComment = fx.github.botComments().find((c) => c.body.includes("### Follow-up"))!;
    expect(planComment.body).toContain("- [ ] **F1** Retry three times");
    // The plan comment says why the step waits: the repository's `ci_fix`, not `follow_up`.
    expect(visible(planComment.body)).toContain("Follow-up on #100: F1 waits for `/fix` (`ci_fix: suggest`).");
    // `/build` on the plan's thread builds the waiting step, as `/fix` on the pull request would.
    await fx.app.deliver("issue_comment", commentPayload({ body: "/build", cloneUrl: fx.repo.url }));
    expect(fx.repo.log(BRANCH)[0]).toBe("F1: Retry three times");
    pull.headSha = fx.repo.head(BRANCH);

    // A new head that fails a check `main` fails too: reported, not fixed.
    const head = fx.repo.commit({ "docs.md": "x\n" }, "docs", BRANCH);
    expect(fx.repo.log(BRANCH).slice(0, 2)).toEqual(["docs", "F1: Retry three times"]);
    pull.headSha = head;
    fx.github.addCheckRun({ name: "lint", head_sha: head, external_id: null, app: ACTIONS, conclusion: "failure" });
    fx.github.addCheckRun({
      name: "lint",
      head_sha: fx.repo.head(),
      external_id: null,
      app: ACTIONS,
      conclusion: "failure",
    });
    await fx.app.deliver("check_suite", suiteFailed(head));
    expect(onPullRequest().at(-1)).toContain(
      "The base branch `main` fails this check too, so the failure is not caused by this pull request",
    );
  });

  it("builds at most `ci_fix_attempts` fixes by itself, and says when it stops", async () => {
    const { pull } = await builtPullRequest([diagnosis, ...fixF1], "ci_fix: build\nci_fix_attempts: 1\n");
    failTests(pull.headSha!);
    await fx.app.deliver("check_suite", suiteFailed(pull.headSha!));
    const fix = fx.repo.head(BRANCH);
    expect(fx.repo.log(BRANCH)[0]).toBe("F1: Retry three times");
    // Another failure on the fix: not the same one, but the one attempt is spent.
    pull.headSha = fix;
    fx.github.addCheckRun({ name: "types", head_sha: fix, external_id: null, app: ACTIONS, conclusion: "failure" });
    const requests = fx.model.requests.length;
    await fx.app.deliver("check_suite", suiteFailed(fix));
    expect(fx.model.requests).toHaveLength(requests);
    expect(fx.repo.head(BRANCH)).toBe(fix);
    expect(onPullRequest().at(-1)).toContain(
      "Blueprint stopped building fixes by itself: it has made 1 for this pull request (`ci_fix_attempts: 1`).",
    );
    expect(onPullRequest().at(-1)).toContain("**F2** (Fix failing check: types) waits in the plan comment");
    expect(visible(fx.github.botComments().find((c) => c.body.includes("### Follow-up"))!.body)).toContain(
      "Follow-up on #100: F2 waits for `/fix` (`ci_fix_attempts: 1` reached).",
    );
  });

  /** The model's diagnosis in two steps, after a look at the file the annotation names. */
  const twoStepDiagnosis = [
    call("read_file", { path: "src/retry.js" }),
    call(
      "submit_plan",
      samplePlan({
        title: "retry makes one attempt",
        summary: "`retry` ignores `n` and calls `fn` once.\nThe test expects three attempts.",
        steps: [
          { id: "S1", title: "Retry three times", details: "Loop `n` times in `retry`.", files: ["src/retry.js"] },
          { id: "S2", title: "Document the retries", details: "Say so in README.md.", files: ["README.md"] },
        ],
        verification: [],
      }),
    ),
  ];

  it("asks the model, read-only, for a diagnosis from the checks' output; the comment quotes it and its F-steps", async () => {
    fx.createRepo({ ...FILES, "AGENTS.md": "Run the tests with `npm test`.\n" });
    const { pull, plan } = await builtPullRequest(twoStepDiagnosis);
    failTests(pull.headSha!);
    await fx.app.deliver("check_suite", suiteFailed(pull.headSha!));

    // A plan-mode run: read-only tools, given the checks' words (annotation, log tail) as untrusted input.
    const asked = fx.model.requests[2]!;
    expect(String(asked.messages[0]?.content)).toContain("PLAN MODE");
    const tools = asked.tools?.map((tool) => tool.function.name) ?? [];
    expect(tools).toContain("submit_plan");
    expect(tools).not.toContain("write_file");
    expect(tools).not.toContain("run_command");
    const task = String(asked.messages[1]?.content);
    expect(task).toContain('<untrusted_input check="test">');
    expect(task).toContain("src/retry.js:1: retries three times expected 3 attempts, got 1");
    expect(task).toContain("FAIL test/retry.test.js > retries three times");
    expect(task).toContain("Add a retry helper");
    expect(task).toContain("## AGENTS.md\nRun the tests with `npm test`.");
    expect(fx.model.requests).toHaveLength(4);

    const said = onPullRequest().at(-1)!;
    expect(said).toMatch(/A check fails on this pull request's head[\s\S]*\*\*test\*\*: 1 test failed/);
    expect(said).toContain(
      "**Diagnosis** (the model's reading of the failure, not checked by a person):\n\n> `retry` ignores `n` and calls `fn` once.\n> The test expects three attempts.",
    );
    expect(said).toContain(
      "**F1** (Retry three times) and **F2** (Document the retries) wait in the plan comment: comment `/fix` to build them.",
    );
    const planBody = fx.github.comments.find((c) => c.id === plan.id)!.body;
    expect(planBody).toContain("- [ ] **F1** Retry three times");
    expect(planBody).toContain("- [ ] **F2** Document the retries");
    // The diagnosis's two requests are the follow-up's cost so far.
    expect(planBody).toContain("Follow-up cost so far: 200 prompt tokens (0 cached) + 40 completion tokens over 2");
    expect(fx.repo.log(BRANCH)[0]).toBe("S1: Add a retry helper");
  });

  it("`ci_fix: build` builds the model's F-steps, each told the diagnosis and the checks' output", async () => {
    const { pull, plan } = await builtPullRequest(
      [
        ...twoStepDiagnosis,
        ...fixF1,
        call("write_file", { path: "README.md", content: "# Hello\n\nRetries three times.\n" }),
        call("complete_step", { step_id: "F2", summary: "Documented." }),
      ],
      "ci_fix: build\n",
    );
    failTests(pull.headSha!);
    await fx.app.deliver("check_suite", suiteFailed(pull.headSha!));

    expect(fx.repo.log(BRANCH).slice(0, 3)).toEqual([
      "F2: Document the retries",
      "F1: Retry three times",
      "S1: Add a retry helper",
    ]);
    const step = String(fx.model.requests[4]?.messages[1]?.content);
    expect(step).toContain("Step F1: Retry three times");
    expect(step).toContain("Loop `n` times in `retry`.");
    expect(step).toContain("Diagnosis of the failing checks (the model's, from their output):\n`retry` ignores `n`");
    expect(step).toContain('<untrusted_input check="test">');
    expect(onPullRequest().at(-1)).toContain("Building **F1**, **F2** to fix it (attempt 1 of 2).");
    const state = stateOf(fx.github.comments.find((c) => c.id === plan.id)!.body);
    expect(state.followUp?.ci.fixes).toEqual([expect.objectContaining({ pushed: fx.repo.head(BRANCH) })]);
  });

  it.each([
    ["the model endpoint fails", [{ status: 400 }], "the model endpoint at"],
    [
      "the model answers without a diagnosis",
      Array.from({ length: 4 }, () => ({ content: "It is flaky." })),
      "the model stopped calling tools without calling submit_plan",
    ],
  ])("%s: the checks' own step, and the comment says no diagnosis was made", async (_, replies, why) => {
    const { pull } = await builtPullRequest(replies);
    failTests(pull.headSha!);
    await fx.app.deliver("check_suite", suiteFailed(pull.headSha!));
    const said = onPullRequest().at(-1)!;
    expect(said).toMatch(/A check fails on this pull request's head[\s\S]*\*\*test\*\*: 1 test failed/);
    expect(said).toContain(`⚠️ The diagnosis could not be made (${why}`);
    expect(said).toContain("the step below is made from the checks' output alone.");
    expect(said).toContain("**F1** (Fix failing check: test) waits in the plan comment");
    expect(said).not.toContain("**Diagnosis**");
  });

  const prices = "prices:\n  test-model: { input: 2, output: 10 }\nlimits:\n  max_cost: 0.05\n";
  /** A request of 10,000 prompt + 1,000 completion tokens: $0.03 at `prices`. */
  const explore = { ...call("read_file", { path: "src/retry.js" }), usage: { prompt: 10_000, completion: 1_000 } };

  it("a diagnosis that spends the cost cap: `ci_fix: build` builds nothing, the checks' own step waits for `/fix`", async () => {
    // The second exploring request reaches the $0.05 cap; `/fix` then builds the step on a cap of its own.
    const { pull, plan } = await builtPullRequest([explore, explore, ...fixF1], `ci_fix: build\n${prices}`);
    failTests(pull.headSha!);
    await fx.app.deliver("check_suite", suiteFailed(pull.headSha!));

    const said = onPullRequest().at(-1)!;
    expect(said).toContain("⚠️ The diagnosis could not be made (the diagnosis reached the cost cap of $0.05)");
    expect(said).toContain(
      "Blueprint did not build a fix by itself: the diagnosis used the whole cost cap of $0.05 (`limits.max_cost` or the App's), which the build shares with it.",
    );
    expect(said).toContain("**F1** (Fix failing check: test) waits in the plan comment");
    expect(said).not.toContain("Building");
    expect(fx.model.requests).toHaveLength(4);
    expect(fx.repo.log(BRANCH)[0]).toBe("S1: Add a retry helper");
    const body = () => fx.github.comments.find((c) => c.id === plan.id)!.body;
    expect(visible(body())).toContain("F1 waits for `/fix` (the diagnosis used the cost cap).");
    expect(stateOf(body()).followUp?.ci.attempts).toBe(0);

    await fx.app.deliver(
      "issue_comment",
      commentPayload({ body: "/fix", number: 100, isPullRequest: true, cloneUrl: fx.repo.url }),
    );
    expect(fx.repo.log(BRANCH)[0]).toBe("F1: Fix failing check: test");
    // The follow-up's cost: the diagnosis's two requests and the build's two.
    expect(body()).toContain("Follow-up cost so far: 20,200 prompt tokens (0 cached) + 2,040 completion tokens over 4");
  });

  it("`ci_fix: build` builds on what the diagnosis left of the cost cap, so the follow-up stays within it", async () => {
    // The diagnosis: $0.03 and a cheap answer. The build's first request ($0.03) leaves nothing of the $0.05 cap:
    // on a cap of its own it would have gone on to write and complete F1.
    const { pull, plan } = await builtPullRequest([explore, diagnosis, explore, ...fixF1], `ci_fix: build\n${prices}`);
    failTests(pull.headSha!);
    await fx.app.deliver("check_suite", suiteFailed(pull.headSha!));

    expect(onPullRequest().at(-1)).toContain("Building **F1** to fix it (attempt 1 of 2).");
    expect(fx.model.requests).toHaveLength(5);
    expect(fx.repo.log(BRANCH)[0]).toBe("S1: Add a retry helper");
    const body = fx.github.comments.find((c) => c.id === plan.id)!.body;
    expect(visible(body)).toContain(
      "the build reached its cost cap of $0.05, which it shares with the diagnosis ($0.03 of it)",
    );
    expect(stateOf(body).followUp).toMatchObject({ status: "failed", steps: [{ id: "F1" }] });
    expect(stateOf(body).steps.F1?.status).not.toBe("done");
  });

  it("the model asks a question instead of diagnosing: the checks' own step, with its question quoted", async () => {
    const question = "Should `retry` back off between attempts? <!-- blueprint:state x -->";
    const { pull, plan } = await builtPullRequest([call("ask_user", { question })]);
    failTests(pull.headSha!);
    await fx.app.deliver("check_suite", suiteFailed(pull.headSha!));

    expect(String(fx.model.requests[2]?.messages[1]?.content)).toContain("do not call ask_user");
    const said = onPullRequest().at(-1)!;
    expect(said).toContain(
      "⚠️ The diagnosis could not be made (the model asked a question instead of diagnosing): the step below is made from the checks' output alone. The model asked (a diagnosis waits for no answer):\n\n> Should `retry` back off between attempts? &lt;!-- blueprint:state x -->",
    );
    expect(said).toContain("**F1** (Fix failing check: test) waits in the plan comment");
    expect(said).not.toContain("**Diagnosis**");
    // Nothing waits for an answer: the plan stays built, its F-step waits for `/fix`.
    const state = stateOf(fx.github.comments.find((c) => c.id === plan.id)!.body);
    expect(state).toMatchObject({ status: "built", followUp: { status: "pending", steps: [{ id: "F1" }] } });
    expect(state.questionMode ?? null).toBeNull();
  });

  it("`/cancel` during the diagnosis: no F-step, the pull request hears it stopped, and the commit is not looked at again", async () => {
    let asked = () => {};
    const diagnosing = new Promise<void>((resolve) => (asked = resolve));
    const { pull, plan } = await builtPullRequest([() => (asked(), { hang: true })], "ci_fix: build\n");
    failTests(pull.headSha!);
    void fx.app.probot.receive({
      id: "suite-to-cancel",
      name: "check_suite",
      payload: suiteFailed(pull.headSha!),
    } as never);
    await diagnosing;
    await fx.app.deliver(
      "issue_comment",
      commentPayload({ body: "/cancel", number: 100, isPullRequest: true, cloneUrl: fx.repo.url }),
    );
    await settle(fx.app.blueprint); // without the signal, this waits for the hanging model request

    expect(onPullRequest()).toEqual([
      "Stopping following up failing checks on #100 at the next safe point. Everything already pushed stays.",
      `⏹️ **Stopped** (\`/cancel\`) before a fix was planned for the failing check \`test\` on \`${pull.headSha!.slice(0, 7)}\`: no F-step waits, and Blueprint does not look at this commit's failure again. Comment \`/fix <notes>\` to have it fix the failure.`,
    ]);
    expect(fx.repo.log(BRANCH)[0]).toBe("S1: Add a retry helper");
    const body = fx.github.comments.find((c) => c.id === plan.id)!.body;
    expect(body).not.toContain("### Follow-up");
    expect(stateOf(body).followUp).toMatchObject({
      steps: [],
      handled: [`checks:${pull.headSha}`],
      ci: { attempts: 0 },
    });

    // The same suite delivered again: nothing twice.
    const requests = fx.model.requests.length;
    await fx.app.deliver("check_suite", suiteFailed(pull.headSha!), "suite-again");
    expect(fx.model.requests).toHaveLength(requests);
    expect(onPullRequest()).toHaveLength(2);
  });

  it("starts nothing for Blueprint's own failing check, or another pull request's failure", async () => {
    const { pull } = await builtPullRequest([], "ci_fix: build\n");
    fx.github.addCheckRun({
      name: "Blueprint build",
      head_sha: pull.headSha!,
      external_id: null,
      app: { id: APP_ID, slug: "blueprint" },
      conclusion: "failure",
    });
    failTests(pull.headSha!);
    await fx.app.deliver("check_suite", suiteFailed(pull.headSha!, { app: { id: APP_ID, slug: "blueprint" } }));
    await fx.app.deliver("check_suite", suiteFailed(pull.headSha!, { pullRequest: 7 }));
    expect(onPullRequest()).toEqual([]);
    expect(fx.repo.log(BRANCH)[0]).toBe("S1: Add a retry helper");
    expect(fx.model.requests).toHaveLength(2);
  });
});
