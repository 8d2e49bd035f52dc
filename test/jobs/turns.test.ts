import { afterEach, describe, expect, it, vi } from "vitest";
import { loadEnv } from "../../src/config/env.js";
import { LocalJobs } from "../../src/jobs/local-jobs.js";
import { commandJob } from "../../src/jobs/from-webhook.js";
import type { Job } from "../../src/jobs/job.js";
import { JobMetrics } from "../../src/jobs/metrics.js";
import { Turns } from "../../src/jobs/turns.js";
import { createWorkflowDeps } from "../../src/app/create-deps.js";
import type { Logger } from "../../src/workflow/deps.js";
import type { ThreadPort } from "../../src/workflow/ports.js";
import { tempDir } from "../helpers/git-repo.js";

const quiet = {
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
  debug: () => undefined,
} as unknown as Logger;
/**
 * One turn of the event loop (setImmediate is never faked here): every promise chain not waiting on a timer has run.
 */
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * What the fake ports saw, in order; `until` resolves once its condition holds, checked at each new
 * entry (no polling, no deadline of its own: a condition that never holds fails on the test's timeout).
 */
function recorder() {
  const seen: string[] = [];
  const waiters = new Set<() => void>();
  const record = (line: string) => {
    seen.push(line);
    [...waiters].forEach((check) => check());
  };
  const until = (ready: (lines: string[]) => boolean) =>
    new Promise<void>((resolve) => {
      const check = () => {
        if (!ready(seen)) return;
        waiters.delete(check);
        resolve();
      };
      waiters.add(check);
      check();
    });
  return { seen, record, until };
}

// Timers are faked (setTimeout, clearTimeout) where a test says so: a turn's longest wait passes only when the test
// moves the clock.
afterEach(() => vi.useRealTimers());

describe("turns per key", () => {
  it("lets one turn per key in at a time, in the order asked, and other keys at once", async () => {
    const turns = new Turns();
    const log: string[] = [];
    const first = await turns.take("a");
    const second = turns.take("a").then((turn) => (log.push("a2"), turn));
    const other = turns.take("b").then((turn) => (log.push("b1"), turn));
    await turn();
    expect(log).toEqual(["b1"]);
    first.end();
    first.end(); // twice: no effect
    (await second).end();
    (await other).end();
    expect(log).toEqual(["b1", "a2"]);
    // Nobody waiting: the next turn is immediate.
    const again = await Promise.race([turns.take("a"), turn().then(() => null)]);
    expect(again).not.toBeNull();
  });

  it("lets the next one in after the longest turn, should a turn never end, and not a millisecond sooner", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    const turns = new Turns(30);
    await turns.take("a");
    let next = false;
    void turns.take("a").then(() => (next = true));
    await vi.advanceTimersByTimeAsync(29);
    expect(next).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(next).toBe(true);
  });

  it("gives up on a turn after 15 s unless told otherwise", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    const turns = new Turns();
    await turns.take("a");
    let next = false;
    void turns.take("a").then(() => (next = true));
    await vi.advanceTimersByTimeAsync(14_999);
    expect(next).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(next).toBe(true);
  });
});

describe("triage in a burst", () => {
  it("authorises each installation's first command before anyone's second, and acknowledges in arrival order", async () => {
    // An installation's turn gives up only when the test moves the clock (it never does here).
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    const env = loadEnv({
      BLUEPRINT_WORKDIR: tempDir("blueprint-workdir-"),
      BLUEPRINT_STATE_SECRET: "a-state-secret-for-the-tests-0000",
      PATH: process.env.PATH ?? "",
    });
    const { seen: events, record, until } = recorder();
    /** Permission reads wait until the test answers them. */
    const answers = new Map<string, () => void>();
    const portFor = (installation: number): ThreadPort =>
      ({
        repo: { owner: `org-${installation}`, name: "hello", cloneUrl: "", defaultBranch: "main", htmlUrl: "" },
        number: 1,
        permission: (login: string) => {
          record(`permission ${installation}/${login}`);
          return new Promise((resolve) => answers.set(`${installation}/${login}`, () => resolve("write")));
        },
        reactToComment: async (commentId: number) => void record(`👀 ${installation}/${commentId}`),
        postComment: async () => ({ id: 1, url: "" }),
      }) as unknown as ThreadPort;
    const backend = new LocalJobs({
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
      const repository = {
        owner: `org-${installationId}`,
        name: "hello",
        cloneUrl: "",
        defaultBranch: "main",
        htmlUrl: "",
      };
      const job = commandJob(
        {
          deliveryId: `d-${commentId}`,
          installationId,
          repository,
          number: 1,
          actor,
          receivedAt: Date.now(),
          commentId,
        },
        "/plan",
      );
      if (!job) throw new Error("not a job");
      return job;
    };
    await backend.submit({ job: plan(1, "ann", 11), keys: ["11"] });
    await backend.submit({ job: plan(1, "bob", 12), keys: ["12"] });
    await backend.submit({ job: plan(2, "cid", 21), keys: ["21"] });
    // The three triages start in one turn, in arrival order (bob's before cid's), and run until they wait.
    await until((lines) => lines.length >= 2);
    await turn();
    // Installation 2's first command does not wait for installation 1; installation 1's second does.
    expect(events).toEqual(["permission 1/ann", "permission 2/cid"]);
    answers.get("1/ann")!();
    await until((lines) => lines.length >= 4);
    expect(events.slice(2)).toEqual(["👀 1/11", "permission 1/bob"]);
    answers.get("1/bob")!();
    answers.get("2/cid")!();
    await until((lines) => lines.length >= 6);
    // Across installations the order is free; within one, 👀 1/11 came before 1/bob was even read.
    expect(events.slice(4).sort()).toEqual(["👀 1/12", "👀 2/21"]);
  });
});

describe("a thread's commands reach its lane in arrival order", () => {
  it("holds a /cancel until the /plan before it is queued, even when the /plan's 👀 outlasts its installation's turn", async () => {
    // The installation's turn (30 ms) gives up when the test moves the clock.
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    const env = loadEnv({
      BLUEPRINT_WORKDIR: tempDir("blueprint-workdir-"),
      BLUEPRINT_STATE_SECRET: "a-state-secret-for-the-tests-0000",
      PATH: process.env.PATH ?? "",
    });
    const { seen: log, record, until } = recorder();
    let releaseFirstEyes = () => {};
    const port = {
      repo: { owner: "org", name: "hello", cloneUrl: "", defaultBranch: "main", htmlUrl: "" },
      number: 1,
      permission: async () => "write",
      // The /plan's 👀 is stuck (GitHub's rate limits, say) well past the installation's turn.
      reactToComment: (commentId: number) => (
        record(`👀 ${commentId}`),
        commentId === 11 ? new Promise<void>((resolve) => (releaseFirstEyes = resolve)) : Promise.resolve()
      ),
      postComment: async (body: string) => (record(`reply ${body}`), { id: 1, url: "" }),
      comments: async () => [],
      info: async () => ({ title: "t", body: "", author: "ann", state: "open", isPullRequest: false, labels: [] }),
    } as unknown as ThreadPort;
    const backend = new LocalJobs({
      deps: createWorkflowDeps(env, quiet),
      portsFor: async () => ({ ack: port, reply: port, work: port }),
      concurrency: 2,
      metrics: new JobMetrics({ processMetrics: false }),
      triageTurnMs: 30,
      runWork: (job, signal) =>
        new Promise<void>((resolve) =>
          signal.addEventListener("abort", () => (record(`aborted ${job.deliveryId}`), resolve()), { once: true }),
        ),
    });
    const command = (commentId: number, body: string): Job => {
      const repository = { owner: "org", name: "hello", cloneUrl: "", defaultBranch: "main", htmlUrl: "" };
      const job = commandJob(
        {
          deliveryId: `d-${commentId}`,
          installationId: 1,
          repository,
          number: 1,
          actor: "ann",
          receivedAt: Date.now(),
          commentId,
        },
        body,
      );
      if (!job) throw new Error("not a job");
      return job;
    };
    await backend.submit({ job: command(11, "/plan"), keys: ["11"] });
    await backend.submit({ job: command(12, "/cancel"), keys: ["12"] });
    // The /plan's 👀 is stuck; the /cancel waits for the installation's turn.
    await until((lines) => lines.includes("👀 11"));
    await turn();
    expect(log).toEqual(["👀 11"]);
    // The turn gives up on the /plan's 👀: the /cancel is triaged (👀), and still waits for the /plan.
    await vi.advanceTimersByTimeAsync(30);
    await until((lines) => lines.includes("👀 12"));
    await turn();
    expect(log).toEqual(["👀 11", "👀 12"]);
    releaseFirstEyes();
    await until((lines) => lines.some((line) => line.startsWith("reply ")));
    // The /cancel stopped the /plan it followed, instead of finding nothing and letting the /plan run.
    expect(log.filter((line) => line.startsWith("aborted"))).toEqual(["aborted d-11"]);
    expect(log.filter((line) => line.startsWith("reply "))[0]).toMatch(/^reply Stopping/);
  });
});
