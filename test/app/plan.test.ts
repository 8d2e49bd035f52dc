import { describe, expect, it } from "vitest";
import { readStateMarker } from "../../src/github/state-marker.js";
import { testSeal } from "../helpers/plan-state.js";
import { INSTALLATION_TOKEN } from "../helpers/github-double.js";
import { samplePlan } from "../helpers/model-server.js";
import { commentPayload } from "../helpers/app.js";
import { useAppFixture } from "../helpers/app-fixture.js";

const FILES = {
  "README.md": "# Hello\n",
  "src/client.js": "export async function get(url) {\n  return fetch(url);\n}\n",
  "package.json": '{ "name": "hello", "scripts": { "test": "node --test" } }\n',
};

describe("/plan on an issue", () => {
  const fx = useAppFixture({ files: FILES, permissions: { maintainer: "write", reader: "read" } });
  const { start } = fx;

  const planComment = () => {
    const bot = fx.github.botComments();
    expect(bot).toHaveLength(1);
    return bot[0]!;
  };

  it("reacts, explores read-only and turns its status comment into the plan", async () => {
    await start([
      { toolCalls: [{ name: "list_files", arguments: { path: null, pattern: null } }] },
      { toolCalls: [{ name: "read_file", arguments: { path: "src/client.js" } }] },
      { toolCalls: [{ name: "search", arguments: { pattern: "fetch\\(", glob: "*.js" } }] },
      { toolCalls: [{ name: "submit_plan", arguments: samplePlan() }] },
    ]);
    await fx.app.deliver(
      "issue_comment",
      commentPayload({
        body: "/plan add retry to the HTTP client\nKeep it small.",
        cloneUrl: fx.repo.url,
        commentId: 77,
      }),
    );

    expect(fx.github.reactions).toEqual([{ commentId: 77, content: "eyes" }]);
    const comment = planComment();
    // The status comment was posted first, then edited into the plan.
    const history = fx.github.commentHistory.get(comment.id)!;
    expect(history[0]).toContain("Planning…");
    expect(history.some((body) => /read 1 file so far/.test(body))).toBe(true);

    const body = comment.body;
    expect(body).toMatch(/^## 📋 Plan v1: Add retry to the HTTP client/);
    expect(body).toContain("- [ ] **S1** Add a retry helper");
    expect(body).toContain("- [ ] **S2** Use the helper in the client");
    expect(body).toContain("after S1");
    expect(body).toContain("```mermaid\nflowchart TD");
    expect(body).toContain("S1 --> S2");
    expect(body).toContain("<details><summary><b>S1</b>");
    expect(body).toContain("`npm test`");
    expect(body).toContain("`/build`");

    const marker = readStateMarker(body, testSeal(comment.id));
    expect(marker.kind).toBe("ok");
    if (marker.kind !== "ok") return;
    expect(marker.state.status).toBe("pending");
    expect(marker.state.revision).toBe(1);
    expect(marker.state.base).toEqual({ branch: "main", sha: fx.repo.head() });
    expect(marker.state.plan?.steps.map((s) => s.id)).toEqual(["S1", "S2"]);
    expect(marker.state.requestedBy).toBe("maintainer");

    // The model saw the instructions (both lines), the issue, and real file content.
    const first = fx.model.requests[0]!;
    const task = JSON.stringify(first.messages);
    expect(task).toContain("add retry to the HTTP client");
    expect(task).toContain("Keep it small.");
    expect(task).toContain("Spelling error in the README file");
    expect(first.tools?.map((t) => t.function.name).sort()).toEqual([
      "ask_user",
      "list_files",
      "read_file",
      "repo_map",
      "search",
      "submit_plan",
    ]);
    expect(JSON.stringify(fx.model.requests[2]!.messages)).toContain("return fetch(url);");
    expect(JSON.stringify(fx.model.requests[3]!.messages)).toContain("src/client.js:2:");
    // The token never reaches the model or the comment.
    expect(JSON.stringify(fx.model.requests)).not.toContain(INSTALLATION_TOKEN);
    expect(body).not.toContain(INSTALLATION_TOKEN);
  });

  it("refuses a read-only user once and never calls the model", async () => {
    await start([{ toolCalls: [{ name: "submit_plan", arguments: samplePlan() }] }]);
    await fx.app.deliver(
      "issue_comment",
      commentPayload({ body: "/plan do it", login: "reader", cloneUrl: fx.repo.url }),
    );
    expect(fx.model.requests).toHaveLength(0);
    const bot = fx.github.botComments();
    expect(bot).toHaveLength(1);
    expect(bot[0]!.body).toMatch(/only people with write access/);
    expect(fx.github.reactions).toEqual([]);
  });

  it("ignores comments by bots, Blueprint included", async () => {
    await start([{ toolCalls: [{ name: "submit_plan", arguments: samplePlan() }] }]);
    await fx.app.deliver(
      "issue_comment",
      commentPayload({ body: "/plan do it", login: "blueprint[bot]", userType: "Bot", cloneUrl: fx.repo.url }),
    );
    expect(fx.model.requests).toHaveLength(0);
    expect(fx.github.requests).toEqual([]);
  });

  it("refuses write_file in plan mode and leaves the tree clean", async () => {
    await start([
      { toolCalls: [{ name: "write_file", arguments: { path: "src/client.js", content: "hacked" } }] },
      { toolCalls: [{ name: "submit_plan", arguments: samplePlan() }] },
    ]);
    await fx.app.deliver("issue_comment", commentPayload({ body: "/plan", cloneUrl: fx.repo.url }));
    const toolAnswer = fx.model.requests[1]!.messages.find((m) => m.role === "tool");
    expect(String(toolAnswer?.content)).toMatch(/^Error: write_file is not available in plan mode.*\/build/s);
    expect(planComment().body).toContain("## 📋 Plan v1");
    expect(fx.repo.show("main", "src/client.js")).toBe(FILES["src/client.js"]);
  });

  it("sends an invalid plan back to the model and posts the corrected one", async () => {
    const broken = samplePlan({
      steps: [
        { id: "S1", title: "One", details: "", files: ["/etc/passwd"], deps: ["S2"] },
        { id: "S2", title: "Two", details: "", files: [], deps: ["S1"] },
      ],
    });
    await start([
      { toolCalls: [{ name: "submit_plan", arguments: broken }] },
      { toolCalls: [{ name: "submit_plan", arguments: samplePlan() }] },
    ]);
    await fx.app.deliver("issue_comment", commentPayload({ body: "/plan", cloneUrl: fx.repo.url }));
    const feedback = String(fx.model.requests[1]!.messages.at(-1)?.content);
    expect(feedback).toMatch(/^Error: the plan was not accepted/);
    expect(feedback).toContain("cycle");
    expect(feedback).toContain("absolute");
    expect(planComment().body).toContain("- [ ] **S2** Use the helper in the client");
  });

  it("reports a model endpoint answering 500 in plain words", async () => {
    await start([{ status: 500 }]);
    await fx.app.deliver("issue_comment", commentPayload({ body: "/plan", cloneUrl: fx.repo.url }));
    const body = planComment().body;
    expect(body).toMatch(/^## ❌ Planning failed/);
    expect(body).toMatch(/answered HTTP 500/);
    expect(body).toContain("What to do:");
    const marker = readStateMarker(body, testSeal(planComment().id));
    expect(marker.kind === "ok" && marker.state.status).toBe("failed");
  });

  it("ends cleanly when the iteration limit is hit", async () => {
    const explore = { toolCalls: [{ name: "list_files", arguments: {} }] };
    await start([explore, explore, explore], { BLUEPRINT_MAX_ITERATIONS: "3" });
    await fx.app.deliver("issue_comment", commentPayload({ body: "/plan", cloneUrl: fx.repo.url }));
    expect(fx.model.requests).toHaveLength(3);
    expect(planComment().body).toMatch(/limit of 3 model turns/);
  });

  it("answers /help and /status without a job", async () => {
    await start([]);
    await fx.app.deliver("issue_comment", commentPayload({ body: "/help", cloneUrl: fx.repo.url }));
    await fx.app.deliver("issue_comment", commentPayload({ body: "/status", cloneUrl: fx.repo.url }));
    const [help, status] = fx.github.botComments();
    expect(help!.body).toContain("/plan [--model NAME] [instructions]");
    expect(status!.body).toContain("No plan yet");
    expect(fx.model.requests).toHaveLength(0);
  });

  it("does not start a second job for a redelivered webhook", async () => {
    await start([
      { toolCalls: [{ name: "submit_plan", arguments: samplePlan() }] },
      { toolCalls: [{ name: "submit_plan", arguments: samplePlan() }] },
    ]);
    const payload = commentPayload({ body: "/plan", cloneUrl: fx.repo.url, commentId: 5 });
    await fx.app.deliver("issue_comment", payload, "same-delivery");
    await fx.app.deliver("issue_comment", payload, "same-delivery");
    expect(fx.model.requests).toHaveLength(1);
    expect(fx.github.botComments()).toHaveLength(1);
  });
});
