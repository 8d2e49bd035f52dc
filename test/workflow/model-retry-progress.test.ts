import { describe, expect, it, vi } from "vitest";
import { createModelClient, type ModelRetry } from "../../src/agent/model.js";
import { commentPayload } from "../helpers/app.js";
import { stateOf, useAppFixture } from "../helpers/app-fixture.js";
import { samplePlan, startModelServer, type ScriptedReply } from "../helpers/model-server.js";
import { blueprint } from "../cli/support.js";
import { createBareRepo } from "../helpers/git-repo.js";

/** A model request that fails or stays silent is retried where people can see it (issue #15, point 3). */

const submit: ScriptedReply = { toolCalls: [{ name: "submit_plan", arguments: samplePlan() }] };
const fx = useAppFixture({ files: { "README.md": "# Hello\n" } });

describe("retries of model requests", () => {
  it("the model client reports each retry: attempt, reason, wait and the time limit", async () => {
    const server = await startModelServer([{ status: 503 }, { hang: true }, { content: "done" }]);
    // The time limit runs on the fake clock, which moves only here: the answering attempts always answer within it.
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date"] });
    /** Moves the clock through the SDK's back-off before a retry, in small steps, until the endpoint has `count` requests. */
    const backOffUntil = (count: number) =>
      expect
        .poll(() => {
          if (server.requests.length < count) vi.advanceTimersByTime(50);
          return server.requests.length;
        })
        .toBe(count);
    try {
      const retries: ModelRetry[] = [];
      const client = createModelClient({
        baseURL: server.url,
        apiKey: "k",
        model: "m",
        timeoutMs: 60_000,
        maxRetries: 2,
        onRetry: (retry) => retries.push(retry),
      });
      const reply = client.complete([{ role: "user", content: "hi" }], []);
      await backOffUntil(2);
      // The hanging attempt's limit was set before its request was sent.
      vi.advanceTimersByTime(60_000);
      await backOffUntil(3);
      expect((await reply).message.content).toBe("done");
      expect(
        retries.map(({ attempt, attempts, reason, timeoutMs }) => ({ attempt, attempts, reason, timeoutMs })),
      ).toEqual([
        { attempt: 2, attempts: 3, reason: "answered HTTP 503", timeoutMs: 60_000 },
        { attempt: 3, attempts: 3, reason: "did not answer within 60 s", timeoutMs: 60_000 },
      ]);
      for (const retry of retries) expect(retry.waitedMs).toBeGreaterThan(0);
    } finally {
      vi.useRealTimers();
      await server.close();
    }
  });

  it("the status comment shows the retry while planning, then turns into the plan", async () => {
    const app = await fx.start([{ status: 502 }, submit], {
      BLUEPRINT_MODEL_RETRIES: "2",
      BLUEPRINT_MODEL_TIMEOUT_S: "60",
    });
    await app.deliver("issue_comment", commentPayload({ body: "/plan", cloneUrl: fx.repo.url }));
    const [status] = fx.github.botComments();
    const bodies = fx.github.commentHistory.get(status?.id ?? -1) ?? [];
    const retried = bodies.find((body) => body.includes("attempt 2 of 3"));
    expect(retried).toBeDefined();
    expect(retried).toContain("## ⏳ Planning…");
    expect(retried).toMatch(
      /⚠️ The model endpoint answered HTTP 502 on attempt 1 of 3; attempt 2 of 3 started after a \d+\.\d s wait \(each attempt must start answering within 60 s\)/,
    );
    expect(bodies.at(-1)?.split("\n")[0]).toBe("## 📋 Plan v1: Add retry to the HTTP client");
  });

  it("the plan comment shows a retry while building a step, and drops it once the model answers", async () => {
    const plan = samplePlan({
      verification: [],
      steps: [{ id: "S1", title: "One", details: "", files: [], deps: [] }],
    });
    const app = await fx.start(
      [
        { silentStream: true },
        { toolCalls: [{ name: "write_file", arguments: { path: "one.txt", content: "1\n" } }] },
        { toolCalls: [{ name: "complete_step", arguments: { step_id: "S1", summary: "one" } }] },
      ],
      { BLUEPRINT_MODEL_TIMEOUT_S: "1", BLUEPRINT_MODEL_RETRIES: "2" },
    );
    const seeded = fx.seedPlan(plan);
    await app.deliver("issue_comment", commentPayload({ body: "/build", cloneUrl: fx.repo.url }));
    const bodies = fx.github.commentHistory.get(seeded.id) ?? [];
    const retried = bodies.findIndex((body) => body.includes("attempt 2 of 3"));
    expect(retried).toBeGreaterThan(0);
    expect(bodies[retried]).toMatch(
      /> ⏳ \*\*Building S1 \(1 of 1\)…\*\*\n>\n> ⚠️ The model endpoint did not answer within 1\.0 s on attempt 1 of 3; attempt 2 of 3 started after a [\d.]+ s wait \(each attempt must start answering within 1\.0 s\)\./,
    );
    expect(bodies.slice(retried + 1).filter((body) => body.includes("⚠️ The model endpoint"))).toEqual([]);
    expect(stateOf(bodies.at(-1) ?? "")).toMatchObject({ status: "built", steps: { S1: { status: "done" } } });
    expect(fx.repo.log("blueprint/issue-1")).toEqual(["S1: One", "initial commit"]);
  });

  it("the CLI prints the retry as a progress line, and -v logs it too", async () => {
    const server = await startModelServer([{ status: 500 }, submit, { status: 500 }, submit]);
    try {
      const repo = createBareRepo({ "README.md": "# Hello\n" });
      const env = {
        OPENAI_BASE_URL: server.url,
        OPENAI_API_KEY: "sk-cli-test-key-000000000000000000000",
        BLUEPRINT_MODEL_RETRIES: "1",
      };
      const quiet = await blueprint(["plan", "add retry"], { cwd: repo.seed, env });
      expect(quiet.code).toBe(0);
      expect(quiet.stderr).toMatch(
        /^⚠️ The model endpoint answered HTTP 500 on attempt 1 of 2; attempt 2 of 2 started after a [\d.]+ s wait/m,
      );
      const verbose = await blueprint(["plan", "--new", "add retry", "-v"], { cwd: repo.seed, env });
      expect(verbose.code).toBe(0);
      expect(verbose.stderr).toMatch(/^\[warn\] The model endpoint answered HTTP 500 on attempt 1 of 2/m);
    } finally {
      await server.close();
    }
  });
});
