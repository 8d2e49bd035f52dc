import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AppProcess } from "./support/app-process.js";
import { startCluster, turnOf, type Cluster } from "./support/cluster.js";
import { greeterModelReply, stepOf } from "./support/greeter-scenario.js";
import { environmentOf, jobRunnerOf, localWorkerOf } from "./support/processes.js";

/**
 * The App's key as a file in a system directory the sandbox shows (PRIVATE_KEY_PATH under /etc): the
 * job runner, which runs the agent's commands, is told where the key is (never the key), so its
 * sandbox hides it — the local worker and runner hold neither the key nor the webhook secret.
 */
describe("the App's key in a file under /etc", () => {
  let cluster: Cluster;
  let app: AppProcess;
  let keyDir: string;
  let key: string;

  beforeAll(async () => {
    cluster = await startCluster({ issues: 1, redis: false });
    keyDir = mkdtempSync("/etc/blueprint-e2e-key-");
    key = path.join(keyDir, "app.pem");
    writeFileSync(key, cluster.github.privateKey ?? "", { mode: 0o600 });
    app = await cluster.startIntake({ PRIVATE_KEY: "", PRIVATE_KEY_PATH: key });
  });
  afterAll(async () => {
    await cluster?.stop();
    if (keyDir) rmSync(keyDir, { recursive: true, force: true });
  });

  it("is neither readable nor listed by a build's commands, while the job runner knows only its path", async () => {
    const worker = localWorkerOf(app.pid);
    const runner = jobRunnerOf(worker?.pid ?? -1);
    expect(environmentOf(runner?.pid ?? -1)).not.toContain("PRIVATE_KEY");
    expect(await cluster.deliver(app, cluster.type(1, "/plan greet by name").event)).toBe(200);
    await cluster.waitFor("the plan", () =>
      cluster.github.state.botComments(1).some((c) => c.body.includes("Plan v1")),
    );
    // S1's first turn tries to read the key; the step then goes on as scripted.
    cluster.reply = (request) => {
      if (stepOf(request) !== "S1") return greeterModelReply(request);
      const turn = turnOf(request);
      // The verdicts are built at run time, so the command's own text (echoed with its output) holds neither.
      const probe = `if [ -r ${key} ]; then echo "KEY-$(echo READABLE)"; else echo "key-$(echo hidden)"; fi; echo "entries: $(ls -A ${keyDir} 2>/dev/null | wc -l)"; echo read-attempt-done`;
      if (turn === 0) return { toolCalls: [{ name: "run_command", arguments: { command: probe, timeout_s: null } }] };
      return greeterModelReply({ ...request, messages: request.messages.slice(0, -2) });
    };
    expect(await cluster.deliver(app, cluster.type(1, "/build").event)).toBe(200);
    await cluster.waitFor("the pull request", () => cluster.github.state.pulls.length > 0);
    const answer = cluster.model.requests
      .flatMap((request) => request.messages)
      .map((message) => String(message.content ?? ""))
      .find((content) => content.includes("read-attempt-done"));
    expect(answer, "the command's output, as the model saw it").toBeDefined();
    expect(answer).toContain("key-hidden");
    expect(answer).not.toContain("KEY-READABLE");
    expect(answer).toContain("entries: 0");
    expect(answer).not.toContain("PRIVATE KEY");
    // Where the key is, the runner may know (so its sandbox hides it); the key itself, never.
    expect(environmentOf(runner?.pid ?? -1)).toContain("PRIVATE_KEY_PATH");
  });
});
