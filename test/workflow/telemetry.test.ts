import { describe, expect, it } from "vitest";
import type { TokenUsage } from "../../src/agent/model.js";
import { samplePlan } from "../helpers/model-server.js";
import { commentPayload } from "../helpers/app.js";
import { useAppFixture } from "../helpers/app-fixture.js";

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

/** WorkflowDeps.telemetry: the hook the Prometheus metrics are fed from. */
describe("workflow telemetry", () => {
  const fx = useAppFixture({
    files: { "README.md": "# Hello\n", "src/client.js": "export const get = (url) => fetch(url);\n" },
    permissions: { maintainer: "write" },
  });

  it("tells telemetry what each planning run and build step used, and how long each step took", async () => {
    const usage: Array<{ kind: string; usage: TokenUsage }> = [];
    const seconds: number[] = [];
    const telemetry = {
      modelUsage: (kind: "plan" | "build", used: TokenUsage) => usage.push({ kind, usage: used }),
      stepSeconds: (s: number) => seconds.push(s),
    };
    await fx.start(
      [
        {
          toolCalls: [{ name: "submit_plan", arguments: twoSteps }],
          usage: { prompt: 500, completion: 50, cached: 100 },
        },
        write("src/retry.js", "x\n"),
        complete("S1"),
        complete("S2"),
      ],
      {},
      { deps: { telemetry } },
    );
    await fx.app.deliver("issue_comment", commentPayload({ body: "/plan add retries", cloneUrl: fx.repo.url }));
    await fx.app.deliver("issue_comment", commentPayload({ body: "/build", cloneUrl: fx.repo.url, commentId: 2002 }));

    expect(usage).toEqual([
      { kind: "plan", usage: { prompt: 500, completion: 50, cached: 100, requests: 1 } },
      { kind: "build", usage: { prompt: 20_000, completion: 2_000, cached: 0, requests: 2 } },
      { kind: "build", usage: { prompt: 10_000, completion: 1_000, cached: 0, requests: 1 } },
    ]);
    expect(seconds).toHaveLength(2);
    for (const s of seconds) expect(s).toBeGreaterThan(0);
  });
});
