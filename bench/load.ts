// Load, as issue #11 measured it: 1000 signed webhooks at concurrency 100 over 100 installations
// (810 /plan by writers on 150 issues, 20 comments delivered 3× with one delivery id, 80 by a
// read-only user, 50 by a bot), against a local GitHub double that serves REST and git smart HTTP;
// each /plan clones its repository and runs a two-request model conversation (read package.json,
// submit a plan), and every comment the app posts is echoed back as a webhook, as GitHub does.
// Twice: embedded (`npm start` alone) and with Redis (one intake with BLUEPRINT_WORKERS=0 and two
// `npm run worker` processes). Measured from outside: webhook response times, time to the first 👀
// per installation and per comment, and what must never happen (duplicates, unauthorized runs, lost
// commands). Figures are printed, not asserted.
//
// Run through bench/index.mjs (`npm run bench load`), which starts it with `node --import tsx`.
// Knobs (environment): BENCH_LOAD_CONCURRENCY (100), BENCH_LOAD_DEADLINE_S (300, per mode),
// BENCH_LOAD_MODES (embedded,redis), BENCH_LOAD_WARM_UP (3000 bots' comments before the burst; 300
// measures a nearly fresh process);
// for looking into a figure: BENCH_LOAD_TRACE=<installation id> prints that installation's timeline,
// BENCH_LOAD_APP_NODE_OPTIONS adds Node options to the app (e.g. `--import <a profiler hook>`),
// BENCH_LOAD_APP_LOG=<file> writes the app's output there.
// The app runs with bench/support/loop-probe.mjs preloaded, which reports its event-loop delay.
import { randomUUID } from "node:crypto";
import { once } from "node:events";
import { fork } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { startGitHubDouble, type GitHubDouble, type RecordedRequest } from "../test/e2e/double/github-server.js";
import { childrenOf } from "../test/e2e/support/processes.js";
import type { CommentRecord, RepositoryRole } from "../test/e2e/double/state.js";
import { deliverWebhook, issueCommentCreated, signWebhook, webhookHeaders } from "../test/e2e/double/webhooks.js";
import { requireBuiltApp, startAppProcess, type AppProcess } from "../test/e2e/support/app-process.js";
import { startWorkerProcess, type WorkerProcess } from "../test/e2e/support/worker-process.js";
import { startModelServer, type ModelRequest, type ModelServer, type ScriptedReply } from "../test/helpers/model-server.js";
import { startRedisServer, type RedisServer } from "../test/helpers/redis-server.js";

const INSTALLATIONS = 100;
/** Installations with two issues (the others have one): 150 issues in all. */
const TWO_ISSUES = 50;
/** Issues that get six writer /plan (the others five): 60 × 6 + 90 × 5 = 810. */
const SIX_PLANS = 60;
/** Jobs at once per worker process (the app's BLUEPRINT_CONCURRENCY): they mostly wait on GitHub's pacing of writes. */
const JOB_CONCURRENCY = positive("BENCH_LOAD_JOB_CONCURRENCY", 32);
const MODES = (process.env.BENCH_LOAD_MODES ?? "embedded,redis").split(",").map((mode) => mode.trim()).filter((mode): mode is Mode => mode === "embedded" || mode === "redis");
type Mode = "embedded" | "redis";
const CONCURRENCY = positive("BENCH_LOAD_CONCURRENCY", 100);
/** The whole bench, setup and teardown included, stops waiting after this. */
const HARD_DEADLINE_MS = positive("BENCH_LOAD_DEADLINE_S", 300) * 1000;
/** Once every expected effect is there: no new call to the double for this long ends the run (longer than the 3 s comment pacing). */
const QUIET_MS = 5_000;
const FIRST_INSTALLATION_ID = 1000;
const WEBHOOK_SECRET = "bench-load-webhook-secret-7c2e";
const LOOP_PROBE = fileURLToPath(new URL("./support/loop-probe.mjs", import.meta.url));
const TARGETS = { webhookP99Ms: 100, firstReactionP99Ms: 1000 };

const FILES = {
  "README.md": "# greeter\n\nPrints a greeting.\n",
  "package.json": '{ "name": "greeter", "version": "1.0.0", "type": "module" }\n',
  "src/index.js": 'console.log("Hello, world!");\n',
};
const PLAN = {
  title: "Greet people by name",
  summary: "Add a greet helper and use it in the entry point.",
  steps: [{ id: "S1", title: "Add a greet helper", details: "Create `src/greet.js` exporting `greet(name)`.", files: ["src/greet.js"], deps: [], risk: null, complexity: "low" }],
  risks: [],
  verification: ["test -f src/greet.js"],
};

/** Who comments: role on every installation's repository (the bot is not a collaborator). */
const PEOPLE: Record<string, RepositoryRole> = { maintainer: "write", owner: "admin", reader: "read", triager: "triage" };
const BOT = "dependabot[bot]";

type Who = "writer" | "reader" | "bot";
type Kind = "plan" | "help" | "status" | "cancel";
interface Command {
  installation: number;
  issue: number;
  index: number;
  who: Who;
  kind: Kind;
  comment: CommentRecord;
  /** Webhook body and signature, made before the clock starts. */
  body: string;
  signature: string;
}
interface Delivery {
  command: Command;
  deliveryId: string;
  redelivery: "none" | "same-delivery";
  sentAt?: number;
  latencyMs?: number;
  status?: number;
}
interface Tenant {
  id: number;
  view: GitHubDouble;
  issues: number[];
  repoPath: string;
  commands: Command[];
}

export async function run(): Promise<void> {
  requireBuiltApp();
  const summaries: Summary[] = [];
  for (const mode of MODES) {
    console.log(`\n--- ${mode === "embedded" ? "embedded: `npm start` alone" : "Redis: one intake (BLUEPRINT_WORKERS=0) and two `npm run worker` processes"} ---\n`);
    summaries.push(await runMode(mode));
  }
  if (summaries.length > 1) {
    console.log("\n--- side by side ---\n");
    const keys = Object.keys(summaries[0]?.figures ?? {});
    printTable(["figure", ...summaries.map((s) => s.mode)], keys.map((key) => [key, ...summaries.map((s) => s.figures[key] ?? "n/a")]));
  }
}

/** What bench/support/loop-probe.mjs writes: the app's event-loop delay, and its stalls over 50 ms (wall-clock start, length). */
interface AppLoop {
  p50: number;
  p99: number;
  max: number;
  stalls?: Array<{ at: number; ms: number }>;
}

interface Summary {
  mode: Mode;
  figures: Record<string, string>;
}

async function runMode(mode: Mode): Promise<Summary> {
  const startedAt = Date.now();
  const loadBefore = os.loadavg()[0]!;
  const deadline = startedAt + HARD_DEADLINE_MS;
  const scratch = mkdtempSync(path.join(os.tmpdir(), "blueprint-bench-load-"));
  const loopDelay = monitorEventLoopDelay({ resolution: 10 });
  let github: GitHubDouble | undefined;
  let model: ModelServer | undefined;
  let app: AppProcess | undefined;
  let redis: RedisServer | undefined;
  const workers: WorkerProcess[] = [];
  // Stopped from outside (bench/index.mjs's hard limit, Ctrl-C): the app runs in its own process group, so take it along.
  const onSignal = () => {
    for (const pid of [app?.pid, ...workers.map((w) => w.pid)]) {
      if (pid && pid > 0) {
        try {
          process.kill(-pid, "SIGKILL");
        } catch {
          // Already gone.
        }
      }
    }
    void redis?.stop();
    rmSync(scratch, { recursive: true, force: true });
    process.exit(130);
  };
  process.once("SIGTERM", onSignal);
  process.once("SIGINT", onSignal);
  try {
    // 1. GitHub: one installation and repository each, one or two issues each, the same people everywhere.
    const ids = Array.from({ length: INSTALLATIONS }, (_, n) => FIRST_INSTALLATION_ID + n);
    const owner = (id: number) => `org-${id}`;
    const issuesFor = (id: number) =>
      Array.from({ length: id - FIRST_INSTALLATION_ID < TWO_ISSUES ? 2 : 1 }, (_, n) => ({ title: `Greet people by name (installation ${id}, #${n + 1})`, body: "The CLI always says hello to the world.", author: "maintainer" }));
    github = await startGitHubDouble({
      files: FILES,
      installationId: ids[0]!,
      owner: owner(ids[0]!),
      issues: issuesFor(ids[0]!),
      permissions: PEOPLE,
      installations: ids.slice(1).map((id) => ({ id, owner: owner(id), issues: issuesFor(id), permissions: PEOPLE })),
      // Nothing but the app's pushes changes the repositories here; GitHub's git does not run on the machine under test.
      cacheGitReads: true,
    });
    model = await startModelServer(Array.from({ length: 5_000 }, () => modelReply));
    const home = path.join(scratch, "home");
    const probeFile = path.join(scratch, "app-loop.json");
    const shared = {
      HOME: home,
      APP_ID: String(github.appId),
      GHE_HOST: github.host,
      GHE_PROTOCOL: "http",
      OPENAI_BASE_URL: model.url,
      OPENAI_API_KEY: "sk-bench-load-0000000000000000000000",
      BLUEPRINT_MODEL: "bench-model",
      BLUEPRINT_STATE_SECRET: "bench-load-state-secret-shared-by-all",
      BLUEPRINT_CONCURRENCY: String(JOB_CONCURRENCY),
    };
    if (mode === "redis") redis = await startRedisServer();
    app = await startAppProcess(
      {
        ...shared,
        PRIVATE_KEY: github.privateKey ?? "",
        WEBHOOK_SECRET,
        LOG_LEVEL: "warn",
        BLUEPRINT_WORKDIR: path.join(scratch, "workdir"),
        ...(redis ? { REDIS_URL: redis.url, BLUEPRINT_WORKERS: "0" } : {}),
        // The app's event-loop delay, measured from inside (bench/support/loop-probe.mjs); more options for looking into it.
        NODE_OPTIONS: [`--import ${JSON.stringify(LOOP_PROBE)}`, process.env.BENCH_LOAD_APP_NODE_OPTIONS ?? ""].join(" ").trim(),
        BENCH_LOOP_PROBE_FILE: probeFile,
      },
      { readyTimeoutMs: 30_000 },
    );
    if (redis) {
      for (const n of [1, 2]) workers.push(await startWorkerProcess({ ...shared, LOG_LEVEL: "info", REDIS_URL: redis.url, BLUEPRINT_WORKDIR: path.join(scratch, `worker-${n}`) }));
    }
    // A burst right after a restart would measure the processes' start-up (the job runner loads for a
    // second or two): the run starts once /healthz says every process is up, as an operator would wait.
    await untilReady(app.url, deadline);

    // 2. The commands, typed on GitHub before any webhook goes out.
    const tenants = makeTenants(github, ids);
    const deliveries = schedule(tenants);
    const totals = {
      webhooks: deliveries.length,
      commands: tenants.reduce((sum, t) => sum + t.commands.length, 0),
      writer: count(tenants, (c) => c.who === "writer"),
      plans: count(tenants, (c) => c.who === "writer" && c.kind === "plan"),
      reader: count(tenants, (c) => c.who === "reader"),
      bot: count(tenants, (c) => c.who === "bot"),
      sameDelivery: deliveries.filter((d) => d.redelivery === "same-delivery").length,
      issues: tenants.reduce((sum, t) => sum + t.issues.length, 0),
    };
    const warm = warmUp(tenants);
    const baseline = github.requests.length;
    // Comments people (and other bots) typed: never echoed back as the app's.
    const typed = new Set([...github.state.comments.map((c) => c.id), ...warm.commentIds]);

    // 3. Deliver them, CONCURRENCY at a time, echoing every comment the app posts back as a webhook;
    //    after a warm-up of bots' comments (see warmUp), which the figures leave out.
    let cpuBefore: CpuSnapshot | null = null;
    let threadsBefore = new Map<string, ThreadTimes>();
    let sendStart = 0;
    let echo: ReturnType<typeof echoBotComments> | undefined;
    const started = app;
    await sendAll(started.webhookUrl, deliveries, warm.deliveries, deadline, () => {
      loopDelay.enable();
      process.kill(started.pid, "SIGUSR2"); // the probe starts afresh
      cpuBefore = cpuSnapshot(started.pid);
      threadsBefore = threadTimes(started.pid);
      sendStart = Date.now();
      echo = echoBotComments(started.webhookUrl, tenants, typed);
    });
    const sendEnd = Date.now();
    // The intake's threads while the webhooks went out: its event loop's (thread id = pid), and the others.
    const threads = new Map([...threadTimes(app.pid)].map(([tid, after]) => [tid, { onCpu: after.onCpu - (threadsBefore.get(tid)?.onCpu ?? 0), waiting: after.waiting - (threadsBefore.get(tid)?.waiting ?? 0) }]));
    const intakeThread = threads.get(String(app.pid)) ?? null;
    threads.delete(String(app.pid));
    const intakeThreads = [...threads.values()].filter((thread) => thread.onCpu >= 5).sort((a, b) => b.onCpu - a.onCpu);
    const burstCpu = cpuDelta(cpuBefore, cpuSnapshot(app.pid));

    // 4. Wait until every command has its effect, then until the app has been quiet a while (late duplicates).
    let complete = false;
    while (Date.now() < deadline) {
      if (tenants.every(effectsComplete)) {
        complete = true;
        break;
      }
      await sleep(250);
    }
    let seen = -1;
    let quietSince = Date.now();
    while (Date.now() < deadline && Date.now() - quietSince < QUIET_MS) {
      if (github.requests.length !== seen) {
        seen = github.requests.length;
        quietSince = Date.now();
      }
      await sleep(200);
    }
    const echoes = (await echo?.stop()) ?? { sent: 0, ok: 0 };
    loopDelay.disable();
    const finishedAt = Date.now();
    const cpu = cpuDelta(cpuBefore, cpuSnapshot(app.pid));
    await sleep(300); // one more probe dump
    const appLoop = (() => {
      try {
        return safeJson(readFileSync(probeFile, "utf8")) as AppLoop | null;
      } catch {
        return null;
      }
    })();

    // 5. Figures.
    const figures = report({
      github,
      model,
      app,
      workers,
      tenants,
      deliveries,
      totals,
      echoes,
      requests: github.requests.slice(baseline),
      sendStart,
      sendEnd,
      finishedAt,
      complete,
      deadlineHit: finishedAt >= deadline,
      loopDelayP99Ms: loopDelay.percentile(99) / 1e6,
      cpu,
      appLoop,
      intakeThread,
      intakeThreads,
      burstCpu,
      loadBefore,
    });
    return { mode, figures };
  } finally {
    await app?.stop().catch((error: unknown) => console.error("could not stop the app:", error));
    await Promise.all(workers.map((worker) => worker.stop().catch(() => undefined)));
    await redis?.stop().catch(() => undefined);
    await model?.close().catch(() => undefined);
    await github?.stop().catch(() => undefined);
    rmSync(scratch, { recursive: true, force: true });
    process.removeListener("SIGTERM", onSignal);
    process.removeListener("SIGINT", onSignal);
  }
}

/**
 * GitHub sends a webhook for every comment, the App's own included: each comment the app posts is
 * delivered back (signed, as the bot) while the run lasts. The app must answer and ignore them.
 */
function echoBotComments(url: string, tenants: Tenant[], typed: Set<number>) {
  const echoed = new Set<number>();
  const statuses: number[] = [];
  const inFlight = new Set<Promise<void>>();
  let running = true;
  const loop = (async () => {
    while (running) {
      for (const tenant of tenants) {
        for (const comment of tenant.view.state.comments) {
          if (typed.has(comment.id) || echoed.has(comment.id) || comment.user.type !== "Bot") continue;
          echoed.add(comment.id);
          const sent = deliverWebhook(url, WEBHOOK_SECRET, issueCommentCreated(tenant.view, comment)).then(
            (response) => void statuses.push(response.status),
            () => void statuses.push(0),
          );
          inFlight.add(sent);
          void sent.finally(() => inFlight.delete(sent));
        }
      }
      await sleep(200);
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      await Promise.allSettled([...inFlight]);
      return { sent: statuses.length, ok: statuses.filter((status) => status >= 200 && status < 300).length };
    },
  };
}

/** The scripted model: planning reads package.json, then submits its plan; anything else gets a short answer. */
function modelReply(request: ModelRequest): ScriptedReply {
  if (!request.tools?.some((tool) => tool.function.name === "submit_plan")) return { content: "Noted." };
  const turn = request.messages.filter((message) => message.role === "assistant").length;
  if (turn === 0) return { toolCalls: [{ name: "read_file", arguments: { path: "package.json", start_line: null, end_line: null } }] };
  return { toolCalls: [{ name: "submit_plan", arguments: PLAN }] };
}

/**
 * Everyone's commands: 810 writer /plan over the 150 issues (60 issues get six, 90 get five), 20
 * writer /status (each delivered 3× with one delivery id), 80 read-only users' /plan, 50 bots' /plan.
 */
function makeTenants(github: GitHubDouble, ids: number[]): Tenant[] {
  const tenants: Tenant[] = ids.map((id) => {
    const view = github.installation(id);
    return { id, view, issues: id - FIRST_INSTALLATION_ID < TWO_ISSUES ? [1, 2] : [1], repoPath: `/repos/${view.repository.owner}/${view.repository.name}`, commands: [] };
  });
  const add = (tenant: Tenant, issue: number, who: Who, kind: Kind, login: string, body: string) => {
    const { view } = tenant;
    const comment = who === "bot" ? view.state.addComment(issue, { login, type: "Bot" }, body, false) : view.state.addUserComment(issue, login, body);
    const payload = JSON.stringify(issueCommentCreated(view, comment).payload);
    tenant.commands.push({ installation: tenant.id, issue, index: tenant.commands.length, who, kind, comment, body: payload, signature: signWebhook(WEBHOOK_SECRET, payload) });
  };
  const issues = tenants.flatMap((tenant) => tenant.issues.map((issue) => ({ tenant, issue })));
  issues.forEach(({ tenant, issue }, n) => {
    for (let k = 0; k < (n < SIX_PLANS ? 6 : 5); k++) add(tenant, issue, "writer", "plan", k % 2 === 0 ? "maintainer" : "owner", `/plan load-${tenant.id}-${issue}-${k}: greet people by name`);
  });
  tenants.slice(0, 20).forEach((tenant) => add(tenant, 1, "writer", "status", "maintainer", "/status"));
  tenants.slice(20).forEach((tenant) => add(tenant, 1, "reader", "plan", "reader", `/plan ro-${tenant.id}: let me plan too`));
  tenants.slice(0, 50).forEach((tenant) => add(tenant, tenant.issues.at(-1) ?? 1, "bot", "plan", BOT, `/plan bot-${tenant.id}: bump dependencies`));
  return tenants;
}

/**
 * Each installation's webhooks, shuffled, the /status ones twice more with the same
 * X-GitHub-Delivery after their original; installations interleaved at random, each keeping its order.
 */
function schedule(tenants: Tenant[]): Delivery[] {
  const random = prng(7);
  const lanes = tenants.map((tenant) => {
    const originals: Delivery[] = shuffle(tenant.commands, random).map((command) => ({ command, deliveryId: randomUUID(), redelivery: "none" }));
    for (const status of originals.filter((d) => d.command.kind === "status")) {
      for (let again = 0; again < 2; again++) {
        const at = originals.indexOf(status);
        originals.splice(at + 1 + Math.floor(random() * (originals.length - at)), 0, { command: status.command, deliveryId: status.deliveryId, redelivery: "same-delivery" });
      }
    }
    return originals;
  });
  const order: Delivery[] = [];
  let left = lanes.reduce((sum, lane) => sum + lane.length, 0);
  while (left > 0) {
    let pick = Math.floor(random() * left);
    const lane = lanes.find((candidate) => (pick -= candidate.length) < 0)!;
    order.push(lane.shift()!);
    left--;
  }
  return order;
}

/**
 * The webhook sender (bench/support/webhook-sender.mjs) runs in a process of its own, writing
 * pre-encoded requests on raw keep-alive sockets: GitHub's senders do not share the app's machine,
 * so ours should take as little of its CPU as it can (a Node `http` client in this process took a
 * third of a core during the burst), and the double serving GitHub's side on this process's loop
 * must not count as the app's response time. It first sends the WARM_UP deliveries at the same
 * concurrency, unmeasured: connections opened and code run cold would otherwise land in the burst's
 * first hundred webhooks, exactly where a p99 over 1000 falls. GitHub's senders are long warm; the
 * app gets nothing from it but comments it drops.
 */
const SENDER = fileURLToPath(new URL("./support/webhook-sender.mjs", import.meta.url));

async function untilReady(url: string, deadline: number): Promise<void> {
  while (Date.now() < deadline) {
    const health = (await fetch(`${url}/healthz`).then((response) => response.json(), () => null)) as { queue?: { ready?: boolean } } | null;
    if (health?.queue?.ready) return;
    await sleep(100);
  }
  throw new Error("the app did not report ready (/healthz queue.ready) before the deadline");
}

/**
 * Deliveries the sender warms up with: comments by a bot (a dependency updater's "Rebased"), which
 * the app verifies, parses and drops as it would any bot's, starting no job. An App on GitHub sees a
 * stream of comments like these; a burst is never its first traffic. Three thousand, about three
 * seconds of them: after 300 (this bench's warm-up until 2026-11-25) V8 had not yet compiled the
 * webhook path's hot code, and the intake's thread spent about 490 ms of CPU on the burst's
 * thousand webhooks, against about 250 ms after 3000. A long-running App is the warm case; the
 * fresh one is BENCH_LOAD_WARM_UP=300.
 */
const WARM_UP = positive("BENCH_LOAD_WARM_UP", 3000);
function warmUp(tenants: Tenant[]): { deliveries: Array<{ body: string; headers: Record<string, string> }>; commentIds: number[] } {
  const commentIds: number[] = [];
  const deliveries = Array.from({ length: WARM_UP }, (_, n) => {
    const tenant = tenants[n % tenants.length] as Tenant;
    const comment = tenant.view.state.addComment(tenant.issues[0] ?? 1, { login: "renovate[bot]", type: "Bot" }, "Rebased on the default branch.", false);
    commentIds.push(comment.id);
    const body = JSON.stringify(issueCommentCreated(tenant.view, comment).payload);
    return { body, headers: webhookHeaders("issue_comment", randomUUID(), signWebhook(WEBHOOK_SECRET, body)) };
  });
  return { deliveries, commentIds };
}

/** Sends the warm-up, calls `beforeBurst`, then sends `deliveries` and records their answers on them. */
async function sendAll(url: string, deliveries: Delivery[], warmUp: Array<{ body: string; headers: Record<string, string> }>, deadline: number, beforeBurst: () => void): Promise<void> {
  const payloads = deliveries.map(({ command, deliveryId }) => ({ body: command.body, headers: webhookHeaders("issue_comment", deliveryId, command.signature) }));
  const sender = fork(SENDER, [], { execArgv: [], stdio: ["ignore", "inherit", "inherit", "ipc"] });
  try {
    // Over the IPC channel rather than a file: a file's pages written back to disk during the burst cost a kernel thread half a core.
    sender.send({ url, concurrency: CONCURRENCY, deadline, warmUp, deliveries: payloads });
    await once(sender, "message");
    beforeBurst();
    sender.send("go");
    const [results] = (await once(sender, "message")) as [Array<{ sentAt: number; latencyMs: number; status: number } | null>];
    results.forEach((result, index) => {
      if (result) Object.assign(deliveries[index]!, result);
    });
  } finally {
    sender.kill();
  }
}

// ---------------------------------------------------------------------------------------------
// What the double saw, per installation.

type ReplyKind = "help" | "status" | "refusal" | "plan-start" | "queued" | "failure" | "other";
const classify = (body: string): ReplyKind =>
  body.startsWith("### Blueprint commands")
    ? "help"
    : body.startsWith("### Blueprint status")
      ? "status"
      : body.startsWith("Sorry @")
        ? "refusal"
        : body.includes("<!-- blueprint:state") || /^## ⏳ (Planning|Revising)/.test(body)
          ? "plan-start"
          : body.startsWith("Queued:")
            ? "queued"
            : body.startsWith("❌")
              ? "failure"
              : "other";

function expected(tenant: Tenant) {
  const writers = tenant.commands.filter((c) => c.who === "writer");
  const plans = writers.filter((c) => c.kind === "plan");
  return {
    reactions: writers.map((c) => c.comment.id),
    status: writers.filter((c) => c.kind === "status").length,
    plans: plans.length,
    /** Each issue ends with the revision its last /plan made: Plan v<number of /plan on it>. */
    finalRevision: new Map(tenant.issues.map((issue) => [issue, plans.filter((c) => c.issue === issue).length])),
    refusals: tenant.commands.filter((c) => c.who === "reader").length,
  };
}

const hasPlan = (bodies: string[], revision: number) => bodies.some((body) => body.startsWith(`## 📋 Plan v${revision}`));

/** Cheap completeness check from the double's state, while waiting. */
function effectsComplete(tenant: Tenant): boolean {
  const want = expected(tenant);
  const { state } = tenant.view;
  if (!want.reactions.every((id) => state.reactions.some((r) => r.commentId === id && r.content === "eyes"))) return false;
  const replies = tenant.issues.flatMap((issue) => state.botComments(issue).map((c) => c.body));
  const n = (kind: ReplyKind) => replies.filter((body) => classify(body) === kind).length;
  const planned = [...want.finalRevision].every(([issue, revision]) => revision === 0 || hasPlan(state.botComments(issue).map((c) => c.body), revision));
  return n("status") >= want.status && n("refusal") >= want.refusals && planned;
}

interface ReportInput {
  github: GitHubDouble;
  model: ModelServer;
  app: AppProcess;
  workers: WorkerProcess[];
  tenants: Tenant[];
  deliveries: Delivery[];
  totals: Record<string, number>;
  echoes: { sent: number; ok: number };
  requests: RecordedRequest[];
  sendStart: number;
  sendEnd: number;
  finishedAt: number;
  complete: boolean;
  deadlineHit: boolean;
  loopDelayP99Ms: number;
  cpu: CpuDelta | null;
  appLoop: AppLoop | null;
  /** The intake's event-loop thread while the webhooks went out: time it ran, and time it was ready but waited for a core. */
  intakeThread: ThreadTimes | null;
  /** The intake process's other threads that ran at least 5 ms meanwhile (token thread, V8's garbage-collection and compiler threads), busiest first. */
  intakeThreads: ThreadTimes[];
  burstCpu: CpuDelta | null;
  loadBefore: number;
}

function report(input: ReportInput): Record<string, string> {
  const { tenants, deliveries, requests, totals } = input;
  const byRepo = new Map(tenants.map((t) => [t.repoPath, t]));
  const tenantOf = (r: RecordedRequest) => byRepo.get(/^\/repos\/[^/]+\/[^/]+/.exec(r.path)?.[0] ?? "");
  const rest = requests.filter((r) => r.kind === "rest" && r.status < 400);
  const reactions = rest.filter((r) => r.method === "POST" && /\/issues\/comments\/\d+\/reactions$/.test(r.path));
  const posts = rest.filter((r) => r.method === "POST" && /\/issues\/\d+\/comments$/.test(r.path));
  const patches = rest.filter((r) => r.method === "PATCH" && /\/issues\/comments\/\d+$/.test(r.path));
  const bodyOf = (r: RecordedRequest) => String((safeJson(r.body) as { body?: unknown } | null)?.body ?? "");
  const reactedComment = (r: RecordedRequest) => Number(/\/issues\/comments\/(\d+)\/reactions$/.exec(r.path)?.[1]);

  // Model runs: a conversation's first request (no assistant turn yet); its instructions name who asked.
  const runs = input.model.requests
    .filter((m) => !m.messages.some((message) => message.role === "assistant"))
    .map((m) => String(m.messages.find((message) => message.role === "user")?.content ?? ""))
    .map((text) => /^# Request from @\S+\n\n(\S*)/.exec(text)?.[1] ?? "");
  const runsFor = (marker: string) => runs.filter((instructions) => instructions.startsWith(marker)).length;

  let duplicates = 0;
  let lost = 0;
  let unauthorized = 0;
  let queued = 0;
  const problems: string[] = [];
  const firstReactionMs: number[] = [];
  /** The first 👀's path per installation: its first webhook → its token minted → the first permission read → the 👀. */
  const firstPath = { token: [] as number[], permission: [] as number[], reaction: [] as number[] };
  const ackMs: number[] = [];
  let lastEffectAt = 0;
  const note = (line: string) => problems.length < 12 && problems.push(line);

  for (const tenant of tenants) {
    const want = expected(tenant);
    const mine = (list: RecordedRequest[]) => list.filter((r) => tenantOf(r) === tenant);
    const myReactions = mine(reactions);
    const firstSent = (command: Command) => Math.min(...deliveries.filter((d) => d.command === command && d.sentAt !== undefined).map((d) => d.sentAt!));

    // Reactions: exactly one 👀 per writer command, none on readers' or bots' commands.
    for (const command of tenant.commands) {
      const on = myReactions.filter((r) => reactedComment(r) === command.comment.id);
      if (command.who === "writer") {
        if (on.length === 0) {
          lost++;
          note(`installation ${tenant.id}: no 👀 on ${command.kind} by a writer`);
        } else {
          duplicates += on.length - 1;
          if (on.length > 1) note(`installation ${tenant.id}: ${on.length} reactions on one ${command.kind}`);
          ackMs.push(on[0]!.at! - firstSent(command));
          lastEffectAt = Math.max(lastEffectAt, on[0]!.at!);
        }
      } else if (on.length > 0) {
        unauthorized++;
        note(`installation ${tenant.id}: 👀 on a ${command.who}'s /${command.kind}`);
      }
    }
    const ackable = tenant.commands.filter((c) => c.who === "writer").map(firstSent);
    if (myReactions.length > 0 && ackable.length > 0) firstReactionMs.push(Math.min(...myReactions.map((r) => r.at!)) - Math.min(...ackable));
    const firstAt = (list: RecordedRequest[]) => Math.min(...list.map((r) => r.at!));
    const webhookAt = Math.min(...deliveries.filter((d) => d.command.installation === tenant.id && d.sentAt !== undefined).map((d) => d.sentAt!));
    const tokenAt = firstAt(requests.filter((r) => r.kind === "rest" && r.path === `/app/installations/${tenant.id}/access_tokens`));
    const permissionAt = firstAt(mine(rest).filter((r) => r.method === "GET" && /\/collaborators\/[^/]+\/permission$/.test(r.path)));
    const reactionAt = firstAt(myReactions);
    if ([webhookAt, tokenAt, permissionAt, reactionAt].every(Number.isFinite)) {
      firstPath.token.push(tokenAt - webhookAt);
      firstPath.permission.push(permissionAt - tokenAt);
      firstPath.reaction.push(reactionAt - permissionAt);
    }

    // Replies by kind: as many as commands, no more.
    const replies = [...mine(posts).map((r) => ({ kind: classify(bodyOf(r)), at: r.at!, body: bodyOf(r) })), ...mine(patches).map((r) => ({ kind: "patch" as const, at: r.at!, body: bodyOf(r) }))];
    const check = (kind: ReplyKind, wanted: number) => {
      const got = replies.filter((reply) => reply.kind === kind).sort((a, b) => a.at - b.at);
      if (got.length < wanted) {
        lost += wanted - got.length;
        note(`installation ${tenant.id}: ${got.length} of ${wanted} ${kind} replies`);
      }
      if (got.length > wanted) {
        duplicates += got.length - wanted;
        note(`installation ${tenant.id}: ${got.length} ${kind} replies for ${wanted} commands`);
      }
      const last = got[Math.min(wanted, got.length) - 1];
      if (last) lastEffectAt = Math.max(lastEffectAt, last.at);
    };
    check("status", want.status);
    check("refusal", want.refusals);
    check("plan-start", want.plans);
    queued += replies.filter((r) => r.kind === "queued").length;
    for (const [issue, revision] of want.finalRevision) {
      const done = replies.filter((reply) => reply.body.startsWith(`## 📋 Plan v${revision}`)).sort((a, b) => a.at - b.at)[0];
      if (!done || !hasPlan(tenant.view.state.botComments(issue).map((c) => c.body), revision)) {
        lost++;
        note(`installation ${tenant.id}: no Plan v${revision} on #${issue}`);
      } else lastEffectAt = Math.max(lastEffectAt, done.at);
    }
    for (const reply of replies.filter((r) => r.kind === "failure" || r.kind === "other")) note(`installation ${tenant.id}: unexpected reply: ${reply.body.slice(0, 100)}`);

    // Model runs: one per writer's /plan, none for the reader's or the bot's. A later /plan on an issue
    // revises its plan, and the conversation still opens with the first request's words: count per issue.
    for (const [issue, plans] of want.finalRevision) {
      const legit = runsFor(`load-${tenant.id}-${issue}-`);
      if (legit > plans) {
        duplicates += legit - plans;
        note(`installation ${tenant.id}: ${legit} model runs for ${plans} /plan on #${issue}`);
      }
    }
    for (const marker of [`ro-${tenant.id}:`, `bot-${tenant.id}:`]) {
      const wrong = runsFor(marker);
      if (wrong > 0) {
        unauthorized += wrong;
        note(`installation ${tenant.id}: a model run for ${marker}`);
      }
    }
  }

  // Pacing of GitHub writes: per installation versus overall.
  const writes = requests.filter((r) => r.kind === "rest" && r.method !== "GET" && r.installationId !== undefined);
  const perInstallation = new Map<number, number[]>();
  for (const w of writes) perInstallation.set(w.installationId!, [...(perInstallation.get(w.installationId!) ?? []), w.at!]);
  const maxInOneSecond = (times: number[]) => {
    const sorted = [...times].sort((a, b) => a - b);
    let best = 0;
    for (let i = 0, j = 0; i < sorted.length; i++) {
      while (sorted[i]! - sorted[j]! >= 1000) j++;
      best = Math.max(best, i - j + 1);
    }
    return best;
  };
  const gaps: number[] = [];
  for (const times of perInstallation.values()) {
    const sorted = [...times].sort((a, b) => a - b);
    for (let i = 1; i < sorted.length; i++) gaps.push(sorted[i]! - sorted[i - 1]!);
  }
  const medianGap = percentile(gaps, 50);
  const perInstallationPeak = Math.max(0, ...[...perInstallation.values()].map(maxInOneSecond));
  const overallPeak = maxInOneSecond(writes.map((w) => w.at!));
  const tokenGrants = requests.filter((r) => r.kind === "rest" && /\/access_tokens$/.test(r.path) && r.status === 201);

  // Webhook responses.
  const answered = deliveries.filter((d) => d.latencyMs !== undefined);
  const latencies = answered.map((d) => d.latencyMs!);
  const ok2xx = answered.filter((d) => d.status! >= 200 && d.status! < 300).length;
  const jobs = requests.filter((r) => r.kind === "rest" && r.method === "POST" && /\/issues\/\d+\/comments$/.test(r.path) && classify(bodyOf(r)) === "plan-start").length;
  if (process.env.BENCH_LOAD_APP_LOG) writeFileSync(process.env.BENCH_LOAD_APP_LOG, input.app.output());
  const appErrors = [input.app, ...input.workers]
    .flatMap((process) => process.output().split("\n"))
    .filter((line) => /"level":\s*(50|60)/.test(line));

  const burstStalls = (input.appLoop?.stalls ?? []).filter((stall) => stall.at >= input.sendStart - 100 && stall.at <= input.sendEnd);
  const slowest = [...answered].sort((a, b) => b.latencyMs! - a.latencyMs!).slice(0, 5);
  const ms = (value: number | undefined) => (value === undefined || !Number.isFinite(value) ? "n/a" : `${Math.round(value)} ms`);
  const s = seconds;
  const met = (ok: boolean) => (ok ? "met" : "NOT MET");
  const webhookP99 = percentile(latencies, 99);
  const firstP99 = percentile(firstReactionMs, 99);
  const allAnswered = input.complete && lost === 0;

  console.log(
    `${totals.webhooks} webhooks (${totals.commands} commands: ${totals.writer} by writers incl. ${totals.plans} /plan, ${totals.reader} by read-only users, ${totals.bot} by bots; ` +
      `${totals.sameDelivery} redelivered with the same X-GitHub-Delivery) on ${totals.issues} issues ` +
      `over ${tenants.length} installations at concurrency ${CONCURRENCY}, BLUEPRINT_CONCURRENCY=${JOB_CONCURRENCY}, after ${WARM_UP} bots' comments (unmeasured warm-up); sent in ${s(input.sendEnd - input.sendStart)}; GitHub throttling on; ` +
      `${input.echoes.sent} of the app's comments echoed back as webhooks (${input.echoes.ok} answered 2xx).\n`,
  );
  const rows: Array<[string, string, string, string]> = [
    ["webhook responses 2xx", `${ok2xx} / ${deliveries.length} (${statusCounts(answered)})`, "all", met(ok2xx === deliveries.length)],
    ["webhook response p50", ms(percentile(latencies, 50)), "", ""],
    ["webhook response p99", ms(webhookP99), `≤ ${TARGETS.webhookP99Ms} ms`, met(webhookP99 !== undefined && webhookP99 <= TARGETS.webhookP99Ms)],
    ["webhook response max", ms(Math.max(...latencies)), "", ""],
    ["first 👀 per installation p50", ms(percentile(firstReactionMs, 50)), "", ""],
    ["first 👀 per installation p99", ms(firstP99), `≤ ${TARGETS.firstReactionP99Ms} ms`, met(firstP99 !== undefined && firstReactionMs.length === tenants.length && firstP99 <= TARGETS.firstReactionP99Ms)],
    ["first 👀 per installation max", ms(Math.max(...firstReactionMs)), "", ""],
    ["first 👀 per comment p50", ms(percentile(ackMs, 50)), "", ""],
    ["first 👀 per comment p99", ms(percentile(ackMs, 99)), "", ""],
    ["first 👀 per comment max", ms(Math.max(...ackMs)), "", ""],
    ["\"Queued\" notices", String(queued), "", ""],
    ["every command answered, after the 1st webhook", lastEffectAt > 0 ? s(lastEffectAt - input.sendStart) : "n/a", "all answered", met(allAnswered)],
    ["jobs started (planning runs)", `${runs.length} model runs, ${jobs} plan comments`, `${totals.plans}`, met(runs.length === totals.plans && jobs === totals.plans)],
    ["duplicates", String(duplicates), "0", met(duplicates === 0)],
    ["unauthorized runs", String(unauthorized), "0", met(unauthorized === 0)],
    ["lost commands", String(lost), "0", met(lost === 0)],
    ["GitHub writes, one installation", `peak ${perInstallationPeak} in 1 s; gap p50 ${ms(medianGap)}, min ${ms(Math.min(...gaps))}`, "paced (~1 s apart)", met(medianGap !== undefined && medianGap >= 900)],
    ["GitHub writes, all installations", `peak ${overallPeak} in 1 s (${writes.length} writes)`, "> one installation's", met(overallPeak > perInstallationPeak)],
    ["installation tokens minted", `${tokenGrants.length}`, `${tenants.length}`, met(tokenGrants.length >= tenants.length)],
  ];
  printTable(["figure", "value", "target", ""], rows);
  console.log(
    `\nalso: ${requests.length} calls to the double (${input.github.violations.length} undocumented or malformed, ${input.github.unimplemented.length} unimplemented); ` +
      `${appErrors.length} error lines in the app's log; ` +
      `app event-loop delay ${input.appLoop ? `p50 ${input.appLoop.p50} ms, p99 ${input.appLoop.p99} ms, max ${input.appLoop.max} ms` : "n/a"}; ` +
      `the double's event-loop delay p99 ${input.loopDelayP99Ms.toFixed(1)} ms.\n` +
      `While the webhooks went out, the app's event-loop stalls over 50 ms: ${burstStalls.length === 0 ? "none" : burstStalls.map((stall) => `+${stall.at - input.sendStart} ms for ${stall.ms} ms`).join(", ")}; ` +
      `the intake's event-loop thread meanwhile ran ${input.intakeThread ? `${ms(input.intakeThread.onCpu)} and waited ${ms(input.intakeThread.waiting)} for a core` : "n/a"}, ` +
      `its other threads (token thread, V8's garbage collection and compilers) ran ${input.intakeThreads.map((thread) => ms(thread.onCpu)).join(" + ") || "0 ms"}; ` +
      `CPU meanwhile: ${input.burstCpu ? cpuLine(input.burstCpu) : "n/a"}; ` +
      `its five slowest answers (sent at, took): ${slowest.map((d) => `+${(d.sentAt ?? 0) - input.sendStart} ms, ${ms(d.latencyMs)}`).join("; ")}.\n` +
      `The first 👀's path per installation, p50 / p99 (times the double saw): first webhook → token minted ${ms(percentile(firstPath.token, 50))} / ${ms(percentile(firstPath.token, 99))}, ` +
      `→ first permission read ${ms(percentile(firstPath.permission, 50))} / ${ms(percentile(firstPath.permission, 99))}, → 👀 ${ms(percentile(firstPath.reaction, 50))} / ${ms(percentile(firstPath.reaction, 99))}.\n` +
      `CPU from the first webhook to the end, on ${os.availableParallelism()} cores (${s(input.finishedAt - input.sendStart)} wall): ` +
      (input.cpu ? cpuLine(input.cpu) : "n/a") +
      `; load average before the run ${input.loadBefore.toFixed(1)}.\n` +
      `Run ${input.deadlineHit ? "STOPPED AT THE HARD DEADLINE" : input.complete ? "complete" : "incomplete"} after ${s(input.finishedAt - input.sendStart)} (incl. up to ${QUIET_MS / 1000} s waiting for quiet).`,
  );
  if (process.env.BENCH_LOAD_TRACE) {
    // One installation's timeline, for looking into a figure.
    const tenant = tenants.find((t) => t.id === Number(process.env.BENCH_LOAD_TRACE)) ?? tenants[0]!;
    const zero = Math.min(...deliveries.filter((d) => d.command.installation === tenant.id).map((d) => d.sentAt ?? Infinity));
    const lines = [
      ...deliveries.filter((d) => d.command.installation === tenant.id).map((d) => ({ at: d.sentAt ?? 0, text: `webhook ${d.command.who} /${d.command.kind} comment ${d.command.comment.id} (${d.redelivery}) → ${d.status} in ${Math.round(d.latencyMs ?? 0)} ms` })),
      ...requests
        .filter((r) => tenantOf(r) === tenant || r.installationId === tenant.id || r.path.includes(`/installations/${tenant.id}/`))
        .map((r) => ({ at: r.at ?? 0, text: `${r.status} ${r.kind} ${r.method} ${r.path.slice(0, 90)} ${r.kind === "rest" && r.method !== "GET" ? classify(bodyOf(r)) : ""}` })),
    ].sort((a, b) => a.at - b.at);
    const bySecond = new Map<number, number[]>();
    for (const d of deliveries) if (d.sentAt !== undefined) bySecond.set(Math.floor((d.sentAt - input.sendStart) / 1000), [...(bySecond.get(Math.floor((d.sentAt - input.sendStart) / 1000)) ?? []), d.latencyMs ?? NaN]);
    const slow = deliveries.filter((d) => (d.latencyMs ?? 0) > 500).slice(0, 15);
    console.log(`\nslow webhooks: ${slow.map((d) => `+${(d.sentAt ?? 0) - input.sendStart} ms ${d.status} ${Math.round(d.latencyMs ?? 0)} ms ${d.command.who}/${d.command.kind}/${d.redelivery}`).join("; ")}`);
    console.log(`\nwebhook latency by second sent: ${[...bySecond.entries()].map(([sec, l]) => `${sec}s: n=${l.length} p50 ${ms(percentile(l, 50))} max ${ms(Math.max(...l))}`).join("; ")}`);
    console.log(`\ntimeline of installation ${tenant.id} (ms after its first webhook):\n${lines.map((l) => `  ${String(l.at - zero).padStart(6)}  ${l.text}`).join("\n")}`);
  }
  if (problems.length > 0) console.log(`\nfirst problems seen:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
  if (appErrors.length > 0) console.log(`\nfirst app errors:\n${appErrors.slice(0, 3).map((line) => `  ${line.slice(0, 300)}`).join("\n")}`);
  return Object.fromEntries(rows.map(([figure, value]) => [figure, value]));
}

// ---------------------------------------------------------------------------------------------

/** CPU used (ms, Linux /proc): by a process, by its children it has waited for, and by the whole machine. */
interface CpuSnapshot {
  app: number;
  appChildren: number;
  /** The app's processes below it (embedded: the local worker and its job runner), with the git they ran. */
  workers: number;
  bench: number;
  benchChildren: number;
  machine: number;
}
type CpuDelta = CpuSnapshot & { other: number };

function cpuSnapshot(appPid: number): CpuSnapshot | null {
  try {
    const tick = 1000 / 100; // USER_HZ
    const proc = (pid: number | "self") => {
      const fields = readFileSync(`/proc/${pid}/stat`, "utf8").replace(/^.*\) /, "").split(" ");
      const at = (n: number) => Number(fields[n - 3]) * tick; // field n of proc(5), 1-based
      return { own: at(14) + at(15), children: at(16) + at(17) };
    };
    const [user, nice, system, , , irq, softirq, steal] = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1).map(Number);
    const app = proc(appPid);
    const bench = proc("self");
    const workers = descendantsOf(appPid).reduce((sum, pid) => {
      try {
        const used = proc(pid);
        return sum + used.own + used.children;
      } catch {
        return sum; // gone meanwhile
      }
    }, 0);
    return { app: app.own, appChildren: app.children, workers, bench: bench.own, benchChildren: bench.children, machine: (user! + nice! + system! + irq! + softirq! + steal!) * tick };
  } catch {
    return null;
  }
}

/** Every process below `pid` (children, their children, …), from /proc. */
function descendantsOf(pid: number): number[] {
  const found: number[] = [];
  for (let queue = [pid]; queue.length > 0; ) {
    const below = childrenOf(queue.shift()!).map((child) => child.pid);
    found.push(...below);
    queue.push(...below);
  }
  return found;
}

/** A thread's scheduler figures (Linux schedstat), in ms: time on a core, and time ready but waiting for one. */
type ThreadTimes = { onCpu: number; waiting: number };
/** Every thread of a process, by thread id (its event loop's is the pid): the token thread, V8's garbage-collection and compiler threads too. */
function threadTimes(pid: number): Map<string, ThreadTimes> {
  const threads = new Map<string, ThreadTimes>();
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      const [onCpu = "0", waiting = "0"] = readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").trim().split(" ");
      threads.set(tid, { onCpu: Number(onCpu) / 1e6, waiting: Number(waiting) / 1e6 });
    }
  } catch {
    // Gone meanwhile, or not Linux: no figures.
  }
  return threads;
}

/** Milliseconds as seconds: two decimals below 10 s (a burst's CPU), one above. */
function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
}

function cpuLine(cpu: CpuDelta): string {
  const s = seconds;
  return (
    `app (intake) ${s(cpu.app)}; its workers (embedded: local worker, job runner and their git) ${s(cpu.workers)}; bench process (double, sender, model) ${s(cpu.bench)} + the double's git ${s(cpu.benchChildren)}; ` +
    `other processes on the machine ${s(cpu.other)}`
  );
}

function cpuDelta(before: CpuSnapshot | null, after: CpuSnapshot | null): CpuDelta | null {
  if (!before || !after) return null;
  const d = (key: keyof CpuSnapshot) => after[key] - before[key];
  return {
    app: d("app"),
    appChildren: d("appChildren"),
    workers: d("workers"),
    bench: d("bench"),
    benchChildren: d("benchChildren"),
    machine: d("machine"),
    other: Math.max(0, d("machine") - d("app") - d("appChildren") - d("workers") - d("bench") - d("benchChildren")),
  };
}

function printTable(header: string[], rows: string[][]): void {
  const widths = header.map((h, i) => Math.max([...h].length, ...rows.map((row) => [...(row[i] ?? "")].length)));
  const line = (cells: string[]) => `| ${cells.map((cell, i) => cell + " ".repeat(widths[i]! - [...cell].length)).join(" | ")} |`;
  console.log(line(header));
  console.log(`|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`);
  for (const row of rows) console.log(line(row));
}

function statusCounts(deliveries: Delivery[]): string {
  const counts = new Map<number, number>();
  for (const d of deliveries) counts.set(d.status ?? 0, (counts.get(d.status ?? 0) ?? 0) + 1);
  return [...counts.entries()].sort((a, b) => a[0] - b[0]).map(([status, n]) => `${status === 0 ? "no answer" : status}: ${n}`).join(", ");
}

function percentile(values: number[], p: number): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

function count(tenants: Tenant[], predicate: (command: Command) => boolean): number {
  return tenants.reduce((sum, tenant) => sum + tenant.commands.filter(predicate).length, 0);
}

function shuffle<T>(items: T[], random: () => number): T[] {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [copy[i], copy[j]] = [copy[j]!, copy[i]!];
  }
  return copy;
}

function prng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function positive(name: string, fallback: number): number {
  const value = Number(process.env[name]);
  return Number.isFinite(value) && value > 0 ? Math.floor(value) : fallback;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
