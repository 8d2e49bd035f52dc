import { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, expect } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import {
  startModelServer,
  type ModelRequest,
  type ModelServer,
  type ScriptedReply,
} from "../../helpers/model-server.js";
import { PATIENCE_MS } from "../../helpers/patience.js";
import { startRedisServer, type RedisServer } from "../../helpers/redis-server.js";
import { startGitHubDouble, type GitHubDouble } from "../double/github-server.js";
import type { CommentRecord } from "../double/state.js";
import { deliverWebhook, issueCommentCreated, type WebhookEvent } from "../double/webhooks.js";
import { startAppProcess, type AppProcess } from "./app-process.js";
import { FILES, greeterModelReply, STEP_COMMITS, stepOf } from "./greeter-scenario.js";
import { TOKEN_MARGIN_MS } from "../../../src/credentials/index.js";
import { startWorkerProcess, type WorkerProcess } from "./worker-process.js";

export const WEBHOOK_SECRET = "redis-e2e-webhook-secret-7c1d";
const MODEL_KEY = "sk-redis-e2e-model-key-000000000000000";
const STATE_SECRET = "redis-e2e-state-secret-shared-by-intake-and-workers";

/**
 * Real processes sharing a real Redis: intakes (`probot run`, as `npm start`) and workers
 * (`node lib/worker.js`, as `npm run worker`), against the local GitHub double and a scripted model.
 */
export interface Cluster {
  /** Null for a local cluster (`redis: false`): one `npm start`, no other service. */
  redis: RedisServer | null;
  github: GitHubDouble;
  model: ModelServer;
  /** Answers the model's requests; a test may replace it (e.g. to hold a request until it says so). */
  reply: (request: ModelRequest) => ScriptedReply | Promise<ScriptedReply>;
  startIntake(env?: Record<string, string>): Promise<AppProcess>;
  startWorker(env?: Record<string, string>): Promise<WorkerProcess>;
  /** A comment typed on GitHub; its webhook is delivered by `deliver`. */
  type(issue: number, body: string, login?: string): { comment: CommentRecord; event: WebhookEvent };
  deliver(to: AppProcess, event: WebhookEvent, deliveryId?: string): Promise<number>;
  /** Until `done()` holds; fails after PATIENCE_MS, when it never will. */
  waitFor(what: string, done: () => boolean): Promise<void>;
  /** Until the double has seen no request for `quietMs`. */
  waitForQuiet(quietMs?: number): Promise<void>;
  output(): string;
  stop(): Promise<void>;
}

/**
 * The test file's one redis-server, started before its first test and stopped after its last: each
 * cluster of the file uses it in turn (`startCluster({ redis: redis() })`) and flushes it when it stops.
 */
export function fileRedis(): () => RedisServer {
  let server: RedisServer | undefined;
  beforeAll(async () => {
    server = await startRedisServer();
  });
  afterAll(async () => server?.stop());
  return () => {
    if (!server) throw new Error("fileRedis: asked before its beforeAll ran");
    return server;
  };
}

/**
 * A Redis cluster per test, on the file's one redis-server (`fileRedis`): `start()` makes the test's
 * cluster, which is stopped (and the server flushed) after the test.
 */
export function clusterPerTest(): { start(issues: number): Promise<Cluster> } {
  const redis = fileRedis();
  let cluster: Cluster | null = null;
  afterEach(async () => {
    await cluster?.stop();
    cluster = null;
  });
  return {
    async start(issues) {
      cluster = await startCluster({ issues, redis: redis() });
      return cluster;
    },
  };
}

/** What an intake's /healthz says of the queue. */
export async function queueHealth(intake: AppProcess): Promise<{ waiting: number; running: number; workers: number }> {
  const health = (await (await fetch(`${intake.url}/healthz`)).json()) as {
    queue: { waiting: number; running: number; workers: number };
  };
  return health.queue;
}

/** `redis`: false for none, the file's server (`fileRedis`), or unset for a server of the cluster's own. */
export async function startCluster(options: {
  issues: number;
  env?: Record<string, string>;
  redis?: boolean | RedisServer;
}): Promise<Cluster> {
  const shared = typeof options.redis === "object" ? options.redis : null;
  const redis = shared ?? (options.redis === false ? null : await startRedisServer());
  const github = await startGitHubDouble({
    files: FILES,
    issues: Array.from({ length: options.issues }, (_, index) => ({
      title: `Greet people by name (${index + 1})`,
      body: "Greet whoever is named.",
      author: "octocat",
    })),
    permissions: { maintainer: "write" },
  });
  const dirs: string[] = [];
  const dir = (prefix: string) => {
    const made = mkdtempSync(path.join(os.tmpdir(), prefix));
    dirs.push(made);
    return made;
  };
  const processes: Array<AppProcess | WorkerProcess> = [];
  const cluster: Cluster = {
    redis,
    github,
    model: await startModelServer(Array.from({ length: 500 }, () => (request: ModelRequest) => cluster.reply(request))),
    reply: greeterModelReply,
    async startIntake(env = {}) {
      const app = await startAppProcess({
        ...common(),
        APP_ID: String(github.appId),
        PRIVATE_KEY: github.privateKey ?? "",
        WEBHOOK_SECRET,
        BLUEPRINT_WORKDIR: dir("bp-intake-"),
        ...options.env,
        ...env,
      });
      processes.push(app);
      return app;
    },
    async startWorker(env = {}) {
      const worker = await startWorkerProcess({
        ...common(),
        APP_ID: String(github.appId),
        BLUEPRINT_WORKDIR: dir("bp-worker-"),
        ...options.env,
        ...env,
      });
      processes.push(worker);
      return worker;
    },
    type(issue, body, login = "maintainer") {
      const comment = github.state.addUserComment(issue, login, body);
      return { comment, event: issueCommentCreated(github, comment) };
    },
    async deliver(to, event, deliveryId) {
      return (await deliverWebhook(to.webhookUrl, WEBHOOK_SECRET, event, deliveryId)).status;
    },
    async waitFor(what, done) {
      const deadline = Date.now() + PATIENCE_MS;
      while (!done()) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${cluster.output().slice(-8000)}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    async waitForQuiet(quietMs = 2_000) {
      let seen = -1;
      let since = Date.now();
      await cluster.waitFor("the cluster to go quiet", () => {
        if (github.requests.length !== seen) {
          seen = github.requests.length;
          since = Date.now();
        }
        return Date.now() - since >= quietMs;
      });
    },
    output: () =>
      processes.map((p, index) => `--- process ${index} (pid ${p.pid}) ---\n${p.output().slice(-4000)}`).join("\n"),
    async stop() {
      await Promise.all(processes.map((p) => p.stop()));
      await cluster.model.close();
      await github.stop();
      if (shared) await flushRedis(shared);
      else await redis?.stop();
      for (const made of dirs) rmSync(made, { recursive: true, force: true });
    },
  };
  const home = dir("bp-home-");
  const common = () => ({
    HOME: home,
    GHE_HOST: github.host,
    GHE_PROTOCOL: "http",
    LOG_LEVEL: "info",
    OPENAI_BASE_URL: cluster.model.url,
    OPENAI_API_KEY: MODEL_KEY,
    BLUEPRINT_MODEL: "e2e-model",
    BLUEPRINT_MODEL_RETRIES: "0",
    BLUEPRINT_PROGRESS_INTERVAL_MS: "0",
    // The double has no rate limits: GitHub's second between writes would only make the run slow.
    BLUEPRINT_GITHUB_WRITE_GAP_MS: "0",
    BLUEPRINT_STATE_SECRET: STATE_SECRET,
    ...(redis ? { REDIS_URL: redis.url, BLUEPRINT_JOB_LOCK_MS: "1500" } : {}),
  });
  return cluster;
}

/** The turn of a conversation a model request is (0: its first request). */
export const turnOf = (request: ModelRequest) =>
  request.messages.filter((message) => message.role === "assistant").length;
/** Planning conversations offer submit_plan; build steps do not. */
export const isPlanning = (request: ModelRequest) =>
  request.tools?.some((tool) => tool.function.name === "submit_plan") ?? false;

/** Holds the model's replies that `match` until `release()`; everything else is answered at once. */
export function hold(cluster: Cluster, match: (request: ModelRequest) => boolean) {
  let release: () => void = () => {};
  const released = new Promise<void>((resolve) => (release = resolve));
  let held = 0;
  cluster.reply = async (request): Promise<ScriptedReply> => {
    if (match(request)) {
      held++;
      await released;
    }
    return greeterModelReply(request);
  };
  return { release, held: () => held };
}

/**
 * `/build` on `issue` (planned already) with a token that runs out while the build works, time run fast:
 * the build's token says it has the renewal margin and 8 s more, and is refused after 9 s (on GitHub:
 * a token with 18 minutes left, and a step that takes 20); S2 is held past that. Returns, once the
 * build's pull request is open and the cluster quiet, how many tokens were minted meanwhile.
 */
export async function buildOutlastingItsToken(cluster: Cluster, intake: AppProcess, issue: number): Promise<number> {
  const mints = () =>
    cluster.github.requests.filter(
      (request) => request.method === "POST" && /^\/app\/installations\/\d+\/access_tokens$/.test(request.path),
    );
  const before = mints().length;
  cluster.github.queueTokenLifetimes([{ declaredMs: TOKEN_MARGIN_MS + 8_000, validMs: 9_000 }]);
  const gate = hold(cluster, (request) => stepOf(request) === "S2");
  expect(await cluster.deliver(intake, cluster.type(issue, "/build").event)).toBe(200);
  await cluster.waitFor("S2 to start", () => gate.held() === 1);
  expect(cluster.github.repository.log(`blueprint/issue-${issue}`)).toEqual([STEP_COMMITS[1], "initial commit"]);
  const mintedAt = mints()[before]?.at ?? Date.now();
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, mintedAt + 9_500 - Date.now())));
  gate.release();
  await cluster.waitFor("the pull request", () =>
    cluster.github.state.pulls.some((pull) => pull.head === `blueprint/issue-${issue}`),
  );
  await cluster.waitForQuiet();
  // No call was refused: nothing used the first token after it lapsed.
  expect(cluster.github.requests.filter((request) => request.auth === "refused")).toEqual([]);
  return mints().length - before;
}

/**
 * A planning job's runner killed at each of its two attempts (each held at its first model request
 * by `gate`): its worker starts it over once, then gives up on it. Leaves issue `issue` with one
 * comment saying so, and the cluster quiet.
 */
export async function killRunnerUntilItGivesUp(
  cluster: Cluster,
  gate: ReturnType<typeof hold>,
  runnerOf: () => { pid: number } | undefined,
  issue: number,
): Promise<void> {
  for (const held of [1, 2]) {
    await cluster.waitFor(`planning attempt ${held}`, () => gate.held() === held);
    const killed = runnerOf();
    expect(killed, "the job runner").toBeDefined();
    process.kill(killed?.pid ?? -1, "SIGKILL");
    await cluster.waitFor("a fresh job runner", () => (runnerOf()?.pid ?? killed?.pid) !== killed?.pid);
  }
  await cluster.waitFor("the failure on the thread", () =>
    cluster.github.state
      .botComments(issue)
      .some((c) => c.body.startsWith("❌ Blueprint stopped while planning for @maintainer")),
  );
  gate.release();
  await cluster.waitForQuiet();
  const failures = cluster.github.state
    .botComments(issue)
    .filter((c) => c.body.startsWith("❌ Blueprint stopped while"));
  expect(failures).toHaveLength(1);
  expect(failures[0]?.body).toContain("stopped unexpectedly 2 times");
}

/** How many plan jobs the /metrics page at `url` counts with `outcome` (0 when none). */
export async function planJobs(url: string, outcome: "done" | "failed"): Promise<number> {
  const metrics = await (await fetch(`${url}/metrics`)).text();
  return Number(
    new RegExp(`blueprint_jobs_total\\{kind="plan",outcome="${outcome}"\\} (\\d+)`).exec(metrics)?.[1] ?? 0,
  );
}

export const reactionsTo = (cluster: Cluster, commentId: number) =>
  cluster.github.requests.filter((r) => r.method === "POST" && r.path.includes(`/comments/${commentId}/reactions`))
    .length;

/**
 * What a build taken over after its process died must leave on issue `issue`: each step committed
 * once on its branch, one plan comment with both steps ticked, no failure, nothing posted twice.
 */
export function expectBuildFinishedOnce(cluster: Cluster, issue: number): void {
  expect(cluster.github.repository.log(`blueprint/issue-${issue}`)).toEqual([...STEP_COMMITS, "initial commit"]);
  expect(cluster.github.state.pulls.filter((pull) => pull.head === `blueprint/issue-${issue}`)).toHaveLength(1);
  const bot = cluster.github.state.botComments(issue);
  expect(bot.filter((c) => c.body.includes("Plan v1"))).toHaveLength(1);
  expect(bot.some((c) => c.body.includes("❌"))).toBe(false);
  const bodies = bot.map((c) => c.body);
  expect(new Set(bodies).size).toBe(bodies.length);
  const plan = bot.find((c) => c.body.includes("Plan v1"));
  expect(plan?.body).toContain("- [x] **S1**");
  expect(plan?.body).toContain("- [x] **S2**");
}

/** Empties a shared Redis for the file's next cluster (what the last cluster's processes left in it). */
async function flushRedis(server: RedisServer): Promise<void> {
  const connection = new Redis(server.url, { maxRetriesPerRequest: 1 });
  try {
    await connection.flushall();
  } finally {
    connection.disconnect();
  }
}
