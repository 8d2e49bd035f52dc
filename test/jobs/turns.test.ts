import { describe, expect, it } from "vitest";
import { loadEnv } from "../../src/config/env.js";
import { EmbeddedBackend } from "../../src/jobs/embedded.js";
import { commandJob } from "../../src/jobs/from-webhook.js";
import type { Job } from "../../src/jobs/job.js";
import { JobMetrics } from "../../src/jobs/metrics.js";
import { Turns } from "../../src/jobs/turns.js";
import { createWorkflowDeps } from "../../src/workflow/create-deps.js";
import type { Logger } from "../../src/workflow/deps.js";
import type { ThreadPort } from "../../src/workflow/ports.js";
import { tempDir } from "../helpers/git-repo.js";

const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined, debug: () => undefined } as unknown as Logger;
const tick = () => new Promise((resolve) => setTimeout(resolve, 5));

describe("turns per key", () => {
  it("lets one turn per key in at a time, in the order asked, and other keys at once", async () => {
    const turns = new Turns();
    const log: string[] = [];
    const first = await turns.take("a");
    const second = turns.take("a").then((turn) => (log.push("a2"), turn));
    const other = turns.take("b").then((turn) => (log.push("b1"), turn));
    await tick();
    expect(log).toEqual(["b1"]);
    first.end();
    first.end(); // twice: no effect
    (await second).end();
    (await other).end();
    expect(log).toEqual(["b1", "a2"]);
    // Nobody waiting: the next turn is immediate.
    const again = await Promise.race([turns.take("a"), tick().then(() => null)]);
    expect(again).not.toBeNull();
  });

  it("lets the next one in after the longest turn, should a turn never end", async () => {
    const turns = new Turns(30);
    await turns.take("a");
    const started = Date.now();
    await turns.take("a");
    expect(Date.now() - started).toBeGreaterThanOrEqual(25);
  });
});

describe("triage in a burst", () => {
  it("authorises each installation's first command before anyone's second, and acknowledges in arrival order", async () => {
    const env = loadEnv({ BLUEPRINT_WORKDIR: tempDir("blueprint-workdir-"), BLUEPRINT_STATE_SECRET: "a-state-secret-for-the-tests-0000", PATH: process.env.PATH ?? "" });
    const events: string[] = [];
    /** Permission reads wait until the test answers them. */
    const answers = new Map<string, () => void>();
    const portFor = (installation: number): ThreadPort =>
      ({
        repo: { owner: `org-${installation}`, name: "hello", cloneUrl: "", defaultBranch: "main", htmlUrl: "" },
        number: 1,
        permission: (login: string) => {
          events.push(`permission ${installation}/${login}`);
          return new Promise((resolve) => answers.set(`${installation}/${login}`, () => resolve("write")));
        },
        reactToComment: async (commentId: number) => void events.push(`👀 ${installation}/${commentId}`),
        postComment: async () => ({ id: 1, url: "" }),
      }) as unknown as ThreadPort;
    const backend = new EmbeddedBackend({
      deps: createWorkflowDeps(env, quiet),
      portsFor: async (job) => {
        const port = portFor(job.installationId);
        return { ack: port, reply: port, work: port };
      },
      concurrency: 2,
      metrics: new JobMetrics({ processMetrics: false }),
      runWork: () => new Promise<void>(() => {}),
    });
    const plan = (installationId: number, actor: string, commentId: number): Job => {
      const repository = { owner: `org-${installationId}`, name: "hello", cloneUrl: "", defaultBranch: "main", htmlUrl: "" };
      const job = commandJob({ deliveryId: `d-${commentId}`, installationId, repository, number: 1, actor, receivedAt: Date.now(), commentId }, "/plan");
      if (!job) throw new Error("not a job");
      return job;
    };
    await backend.submit({ job: plan(1, "ann", 11), keys: ["11"] });
    await backend.submit({ job: plan(1, "bob", 12), keys: ["12"] });
    await backend.submit({ job: plan(2, "cid", 21), keys: ["21"] });
    await tick();
    // Installation 2's first command does not wait for installation 1; installation 1's second does.
    expect(events).toEqual(["permission 1/ann", "permission 2/cid"]);
    answers.get("1/ann")!();
    await tick();
    expect(events.slice(2)).toEqual(["👀 1/11", "permission 1/bob"]);
    answers.get("1/bob")!();
    answers.get("2/cid")!();
    await tick();
    expect(events.slice(4).sort()).toEqual(["👀 1/12", "👀 2/21"]);
  });
});
