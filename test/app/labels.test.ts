import { describe, expect, it } from "vitest";
import { samplePlan, type Script } from "../helpers/model-server.js";
import { commentPayload } from "../helpers/app.js";
import { stateOf, useAppFixture } from "../helpers/app-fixture.js";
import { DEFAULT_LABELS } from "../../src/workflow/surfaces/labels.js";

const FILES = { "README.md": "# Hello\n", "src/client.js": "export const get = (url) => fetch(url);\n" };
const oneStep = samplePlan({
  verification: ["test -f src/retry.js"],
  steps: [{ id: "S1", title: "Add a retry helper", details: "Create src/retry.js", files: ["src/retry.js"], deps: [] }],
});
const planned: Script = [{ toolCalls: [{ name: "submit_plan", arguments: oneStep }] }];
const built: Script = [
  {
    toolCalls: [
      { name: "write_file", arguments: { path: "src/retry.js", content: "export const retry = (fn) => fn();\n" } },
    ],
  },
  { toolCalls: [{ name: "complete_step", arguments: { step_id: "S1", summary: "Added it." } }] },
];

describe("the thread's Blueprint label", () => {
  const fx = useAppFixture({ files: FILES });
  /** The labels Blueprint added, in order, one request each. */
  const added = () =>
    fx.github.requests
      .filter((r) => r.method === "POST" && r.path.endsWith("/issues/1/labels"))
      .map((r) => (r.body as { labels: string[] }).labels.join());
  const labelRequests = () => fx.github.requests.filter((r) => r.path.includes("/labels"));

  it("moves with the state, /plan to built, one at a time, created with colours and descriptions, other labels untouched", async () => {
    await fx.start(
      [...planned, ...built],
      {},
      { github: { labels: { bug: "d73a4a", "blueprint: planned": "000000" } } },
    );
    fx.github.threadLabels.push("bug");

    await fx.app.deliver("issue_comment", commentPayload({ body: "/plan add retries", cloneUrl: fx.repo.url }));
    expect(fx.github.threadLabels).toEqual(["bug", "blueprint: planned"]);
    await fx.app.deliver("issue_comment", commentPayload({ body: "/build", cloneUrl: fx.repo.url }));

    expect(stateOf(fx.github.botComments()[0]!.body).status).toBe("built");
    expect(added()).toEqual(["blueprint: planned", "blueprint: approved", "blueprint: building", "blueprint: built"]);
    expect(fx.github.threadLabels).toEqual(["bug", "blueprint: built"]);
    // Each state's old label came off as the new one went on; "bug" was never touched.
    const removed = fx.github.requests
      .filter((r) => r.method === "DELETE")
      .map((r) => decodeURIComponent(r.path.split("/").at(-1) ?? ""));
    expect(removed).toEqual(["blueprint: planned", "blueprint: approved", "blueprint: building"]);
    // Created on first use with Blueprint's colour and description; one the repository had is kept as it is.
    expect(fx.github.labels).toEqual([
      { name: "bug", color: "d73a4a", description: null },
      { name: "blueprint: planned", color: "000000", description: null },
      ...(["approved", "building", "built"] as const).map((state) => ({ ...DEFAULT_LABELS[state] })),
    ]);
    expect(
      fx.github.requests.filter(
        (r) => r.method === "POST" && r.path.endsWith("/labels") && !r.path.includes("/issues/"),
      ),
    ).toHaveLength(3);
  });

  it("a build that fails is labelled failed; the /build that resumes it ends built", async () => {
    await fx.start([{ status: 500 }, ...built]);
    fx.seedPlan(oneStep);
    await fx.app.deliver("issue_comment", commentPayload({ body: "/build", cloneUrl: fx.repo.url }));
    expect(stateOf(fx.github.botComments()[0]!.body).status).toBe("failed");
    expect(fx.github.threadLabels).toEqual(["blueprint: failed"]);

    await fx.app.deliver("issue_comment", commentPayload({ body: "/build", cloneUrl: fx.repo.url }));
    expect(stateOf(fx.github.botComments()[0]!.body).status).toBe("built");
    expect(fx.github.threadLabels).toEqual(["blueprint: built"]);
  });

  it("a build's question withdrawn with /cancel takes the building label back to planned (as the repository names it)", async () => {
    fx.createRepo({ ...FILES, ".github/blueprint.yml": 'labels: { planned: "bot: planned" }\n' });
    const asks: Script = [{ toolCalls: [{ name: "ask_user", arguments: { question: "Retry on 404 too?" } }] }];
    await fx.start([...planned, ...asks]);
    await fx.app.deliver("issue_comment", commentPayload({ body: "/plan add retries", cloneUrl: fx.repo.url }));
    await fx.app.deliver("issue_comment", commentPayload({ body: "/build", cloneUrl: fx.repo.url }));
    const plan = fx.github.botComments()[0]!;
    expect(stateOf(fx.github.comments.find((c) => c.id === plan.id)!.body)).toMatchObject({
      status: "awaiting_answer",
      questionMode: "build",
    });
    expect(fx.github.threadLabels).toEqual(["blueprint: building"]);

    await fx.app.deliver("issue_comment", commentPayload({ body: "/cancel", cloneUrl: fx.repo.url }));
    expect(stateOf(fx.github.comments.find((c) => c.id === plan.id)!.body)).toMatchObject({
      status: "cancelled",
      question: null,
    });
    expect(fx.github.botComments().at(-1)!.body).toContain(
      "Withdrew Blueprint's question. Comment `/build` to resume the build.",
    );
    expect(fx.github.threadLabels).toEqual(["bot: planned"]);
  });

  it("a planning run that fails is labelled failed, and the planned label of the revision before comes off", async () => {
    await fx.start([...planned, { status: 500 }]);
    await fx.app.deliver("issue_comment", commentPayload({ body: "/plan add retries", cloneUrl: fx.repo.url }));
    expect(fx.github.threadLabels).toEqual(["blueprint: planned"]);
    await fx.app.deliver(
      "issue_comment",
      commentPayload({ body: "/plan add retries, and timeouts", cloneUrl: fx.repo.url }),
    );
    expect(fx.github.botComments().some((comment) => stateOf(comment.body).status === "failed")).toBe(true);
    expect(fx.github.threadLabels).toEqual(["blueprint: failed"]);
  });

  it("a build whose verification fails is not labelled built", async () => {
    const failing = samplePlan({ verification: ["test -f missing.txt"], steps: oneStep.steps });
    await fx.start(built);
    fx.seedPlan(failing);
    await fx.app.deliver("issue_comment", commentPayload({ body: "/build", cloneUrl: fx.repo.url }));
    expect(stateOf(fx.github.botComments()[0]!.body)).toMatchObject({
      status: "built",
      error: expect.stringContaining("verification failed"),
    });
    expect(fx.github.threadLabels).toEqual(["blueprint: failed"]);
  });

  it("follows .github/blueprint.yml: a label renamed, states switched off", async () => {
    fx.createRepo({
      ...FILES,
      ".github/blueprint.yml": 'labels: { built: "shipped by bot", approved: false, building: false }\n',
    });
    await fx.start([...planned, ...built]);
    await fx.app.deliver("issue_comment", commentPayload({ body: "/plan", cloneUrl: fx.repo.url }));
    await fx.app.deliver("issue_comment", commentPayload({ body: "/build", cloneUrl: fx.repo.url }));
    expect(added()).toEqual(["blueprint: planned", "shipped by bot"]);
    expect(fx.github.threadLabels).toEqual(["shipped by bot"]);
    expect(fx.github.labels).toContainEqual({ ...DEFAULT_LABELS.built, name: "shipped by bot" });
  });

  it("follows .github/blueprint.yml: no labels at all", async () => {
    fx.createRepo({ ...FILES, ".github/blueprint.yml": "labels: false\n" });
    await fx.start([...planned, ...built]);
    await fx.app.deliver("issue_comment", commentPayload({ body: "/plan", cloneUrl: fx.repo.url }));
    await fx.app.deliver("issue_comment", commentPayload({ body: "/build", cloneUrl: fx.repo.url }));
    expect(stateOf(fx.github.botComments()[0]!.body).status).toBe("built");
    expect(labelRequests()).toEqual([]);
  });

  it("never fails a plan or a build when GitHub refuses the label writes", async () => {
    await fx.start([...planned, ...built], {}, { github: { labelWritesRefused: true } });
    await fx.app.deliver("issue_comment", commentPayload({ body: "/plan", cloneUrl: fx.repo.url }));
    await fx.app.deliver("issue_comment", commentPayload({ body: "/build", cloneUrl: fx.repo.url }));
    const plan = fx.github.botComments()[0]!;
    expect(stateOf(plan.body).status).toBe("built");
    expect(fx.github.pulls).toHaveLength(1);
    expect(fx.github.botComments().map((c) => c.body)).not.toContainEqual(expect.stringContaining("❌"));
    // It was tried at each state change (planned, approved, building, built), and refused each time.
    expect(
      labelRequests().filter((r) => r.method === "POST" && r.path.endsWith("/labels") && !r.path.includes("/issues/"))
        .length,
    ).toBeGreaterThanOrEqual(4);
    expect(fx.github.threadLabels).toEqual([]);
  });
});
