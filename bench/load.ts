// Load: 1000 signed webhooks at concurrency 100 over 100 installations, against the real app
// (`probot run ./lib/index.js`, GitHub throttling on) and a local GitHub double with one
// repository per installation. Measured from outside: webhook response times, time to the first
// 👀 per installation, time until every command has its effect, and what must never happen
// (duplicates, unauthorized runs, lost commands). Figures are printed, not asserted.
//
// Run through bench/index.mjs (`npm run bench load`), which starts it with `node --import tsx`.
// Knobs (environment): BENCH_LOAD_INSTALLATIONS (100), BENCH_LOAD_CONCURRENCY (100), BENCH_LOAD_DEADLINE_S (300);
// for looking into a figure: BENCH_LOAD_TRACE=<installation id> prints that installation's timeline,
// BENCH_LOAD_APP_NODE_OPTIONS adds Node options to the app (e.g. `--import <a profiler hook>`).
// The app runs with bench/support/loop-probe.mjs preloaded, which reports its event-loop delay.
import { randomUUID } from "node:crypto";
import { once } from "node:events";
import { Worker } from "node:worker_threads";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { startGitHubDouble, type GitHubDouble, type RecordedRequest } from "../test/e2e/double/github-server.js";
import type { CommentRecord, RepositoryRole } from "../test/e2e/double/state.js";
import { issueCommentCreated, signWebhook } from "../test/e2e/double/webhooks.js";
import { requireBuiltApp, startAppProcess, type AppProcess } from "../test/e2e/support/app-process.js";
import { startModelServer, type ModelRequest, type ModelServer, type ScriptedReply } from "../test/helpers/model-server.js";

const INSTALLATIONS = positive("BENCH_LOAD_INSTALLATIONS", 100);
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
  redelivery: "none" | "same-delivery" | "same-comment";
  sentAt?: number;
  latencyMs?: number;
  status?: number;
}
interface Tenant {
  id: number;
  view: GitHubDouble;
  issue: number;
  repoPath: string;
  commands: Command[];
}

export async function run(): Promise<void> {
  requireBuiltApp();
  const startedAt = Date.now();
  const loadBefore = os.loadavg()[0]!;
  const deadline = startedAt + HARD_DEADLINE_MS;
  const scratch = mkdtempSync(path.join(os.tmpdir(), "blueprint-bench-load-"));
  const loopDelay = monitorEventLoopDelay({ resolution: 10 });
  let github: GitHubDouble | undefined;
  let model: ModelServer | undefined;
  let app: AppProcess | undefined;
  // Stopped from outside (bench/index.mjs's hard limit, Ctrl-C): the app runs in its own process group, so take it along.
  const onSignal = () => {
    if (app && app.pid > 0) {
      try {
        process.kill(-app.pid, "SIGKILL");
      } catch {
        // Already gone.
      }
    }
    rmSync(scratch, { recursive: true, force: true });
    process.exit(130);
  };
  process.once("SIGTERM", onSignal);
  process.once("SIGINT", onSignal);
  try {
    // 1. GitHub: one installation and repository each, one issue each, the same people everywhere.
    const ids = Array.from({ length: INSTALLATIONS }, (_, n) => FIRST_INSTALLATION_ID + n);
    const owner = (id: number) => `org-${id}`;
    const issueFor = (id: number) => ({ title: `Greet people by name (installation ${id})`, body: "The CLI always says hello to the world.", author: "maintainer" });
    github = await startGitHubDouble({
      files: FILES,
      installationId: ids[0]!,
      owner: owner(ids[0]!),
      issues: [issueFor(ids[0]!)],
      permissions: PEOPLE,
      installations: ids.slice(1).map((id) => ({ id, owner: owner(id), issues: [issueFor(id)], permissions: PEOPLE })),
    });
    model = await startModelServer(Array.from({ length: INSTALLATIONS * 20 }, () => modelReply));
    const home = path.join(scratch, "home");
    const probeFile = path.join(scratch, "app-loop.json");
    app = await startAppProcess(
      {
        HOME: home,
        APP_ID: String(github.appId),
        PRIVATE_KEY: github.privateKey ?? "",
        WEBHOOK_SECRET,
        GHE_HOST: github.host,
        GHE_PROTOCOL: "http",
        LOG_LEVEL: "warn",
        OPENAI_BASE_URL: model.url,
        OPENAI_API_KEY: "sk-bench-load-0000000000000000000000",
        BLUEPRINT_MODEL: "bench-model",
        BLUEPRINT_WORKDIR: path.join(scratch, "workdir"),
        // The app's event-loop delay, measured from inside (bench/support/loop-probe.mjs); more options for looking into it.
        NODE_OPTIONS: [`--import ${JSON.stringify(LOOP_PROBE)}`, process.env.BENCH_LOAD_APP_NODE_OPTIONS ?? ""].join(" ").trim(),
        BENCH_LOOP_PROBE_FILE: probeFile,
      },
      { readyTimeoutMs: 30_000 },
    );

    // 2. The commands, typed on GitHub before any webhook goes out.
    const tenants = ids.map((id) => makeTenant(github!, id));
    const deliveries = schedule(tenants);
    const totals = {
      webhooks: deliveries.length,
      commands: tenants.reduce((sum, t) => sum + t.commands.length, 0),
      writer: count(tenants, (c) => c.who === "writer"),
      plans: count(tenants, (c) => c.who === "writer" && c.kind === "plan"),
      reader: count(tenants, (c) => c.who === "reader"),
      bot: count(tenants, (c) => c.who === "bot"),
      sameDelivery: deliveries.filter((d) => d.redelivery === "same-delivery").length,
      sameComment: deliveries.filter((d) => d.redelivery === "same-comment").length,
    };
    const baseline = github.requests.length;

    // 3. Deliver them, CONCURRENCY at a time.
    loopDelay.enable();
    process.kill(app.pid, "SIGUSR2"); // the probe starts afresh
    const cpuBefore = cpuSnapshot(app.pid);
    const sendStart = Date.now();
    await sendAll(app.webhookUrl, deliveries, deadline);
    const sendEnd = Date.now();

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
    loopDelay.disable();
    const finishedAt = Date.now();
    const cpu = cpuDelta(cpuBefore, cpuSnapshot(app.pid));
    await sleep(300); // one more probe dump
    const appLoop = (() => {
      try {
        return safeJson(readFileSync(probeFile, "utf8")) as { p50: number; p99: number; max: number } | null;
      } catch {
        return null;
      }
    })();

    // 5. Figures.
    report({
      github,
      model,
      app,
      tenants,
      deliveries,
      totals,
      requests: github.requests.slice(baseline),
      sendStart,
      sendEnd,
      finishedAt,
      complete,
      deadlineHit: finishedAt >= deadline,
      loopDelayP99Ms: loopDelay.percentile(99) / 1e6,
      cpu,
      appLoop,
      loadBefore,
    });
  } finally {
    await app?.stop().catch((error: unknown) => console.error("could not stop the app:", error));
    await model?.close().catch(() => undefined);
    await github?.stop().catch(() => undefined);
    rmSync(scratch, { recursive: true, force: true });
    process.removeListener("SIGTERM", onSignal);
    process.removeListener("SIGINT", onSignal);
  }
}

/** The scripted model: every planning run submits its plan at once; anything else gets a short answer. */
function modelReply(request: ModelRequest): ScriptedReply {
  if (request.tools?.some((tool) => tool.function.name === "submit_plan")) return { toolCalls: [{ name: "submit_plan", arguments: PLAN }] };
  return { content: "Noted." };
}

/**
 * One installation's commands. Every installation gets the same mix (order shuffled):
 * writers: /plan, /help ×2, /status ×2; a reader's /plan; a bot's /plan; on odd installations
 * also a triager's /cancel (read access: refused).
 */
function makeTenant(github: GitHubDouble, id: number): Tenant {
  const view = github.installation(id);
  const issue = 1;
  const tenant: Tenant = { id, view, issue, repoPath: `/repos/${view.repository.owner}/${view.repository.name}`, commands: [] };
  const add = (who: Who, kind: Kind, login: string, body: string) => {
    const comment = who === "bot" ? view.state.addComment(issue, { login, type: "Bot" }, body, false) : view.state.addUserComment(issue, login, body);
    const payload = JSON.stringify(issueCommentCreated(view, comment).payload);
    tenant.commands.push({ installation: id, index: tenant.commands.length, who, kind, comment, body: payload, signature: signWebhook(WEBHOOK_SECRET, payload) });
  };
  add("writer", "plan", "maintainer", `/plan load-${id}: greet people by name`);
  add("writer", "help", "maintainer", "/help");
  add("writer", "status", "owner", "/status");
  add("writer", "help", "owner", "/help");
  add("writer", "status", "maintainer", "/status");
  add("reader", "plan", "reader", `/plan ro-${id}: let me plan too`);
  add("bot", "plan", BOT, `/plan bot-${id}: bump dependencies`);
  if (id % 2 === 1) add("reader", "cancel", "triager", "/cancel");
  return tenant;
}

/**
 * Ten webhooks per installation: its commands, shuffled, plus redeliveries after their originals
 * (the /plan with the same X-GitHub-Delivery; a /help as a new delivery of the same comment; on
 * even installations the reader's /plan again as a new delivery). Installations are interleaved
 * at random, each keeping its own order.
 */
function schedule(tenants: Tenant[]): Delivery[] {
  const random = prng(7);
  const lanes = tenants.map((tenant) => {
    const originals: Delivery[] = shuffle(tenant.commands, random).map((command) => ({ command, deliveryId: randomUUID(), redelivery: "none" }));
    const insertAfter = (original: Delivery, extra: Delivery) => {
      const at = originals.indexOf(original);
      originals.splice(at + 1 + Math.floor(random() * (originals.length - at)), 0, extra);
    };
    const of = (predicate: (c: Command) => boolean) => originals.find((d) => d.redelivery === "none" && predicate(d.command))!;
    const plan = of((c) => c.who === "writer" && c.kind === "plan");
    insertAfter(plan, { command: plan.command, deliveryId: plan.deliveryId, redelivery: "same-delivery" });
    const help = of((c) => c.who === "writer" && c.kind === "help");
    insertAfter(help, { command: help.command, deliveryId: randomUUID(), redelivery: "same-comment" });
    if (tenant.id % 2 === 0) {
      const refused = of((c) => c.who === "reader");
      insertAfter(refused, { command: refused.command, deliveryId: randomUUID(), redelivery: "same-comment" });
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
 * The webhook sender runs in a worker thread with an event loop of its own: the double serves
 * GitHub's side on this thread (REST, git over CGI), and its work would otherwise count as the
 * app's response time. (GitHub's own sender is not slowed down by GitHub's API servers either.)
 */
const SENDER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const http = require("node:http");
const { performance } = require("node:perf_hooks");
const { url, concurrency, deadline, deliveries } = workerData;
const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
const results = new Array(deliveries.length);
function send(delivery) {
  const sentAt = Date.now();
  const started = performance.now();
  return new Promise((resolve) => {
    const done = (status) => resolve({ sentAt, latencyMs: performance.now() - started, status });
    const request = http.request(url, { method: "POST", agent, headers: delivery.headers, timeout: 30000 }, (response) => {
      response.resume();
      response.on("end", () => done(response.statusCode || 0));
      response.on("error", () => done(0));
    });
    request.on("timeout", () => request.destroy(new Error("timeout")));
    request.on("error", () => done(0));
    request.end(delivery.body);
  });
}
let next = 0;
async function worker() {
  while (next < deliveries.length && Date.now() < deadline) {
    const index = next++;
    results[index] = await send(deliveries[index]);
  }
}
Promise.all(Array.from({ length: concurrency }, worker)).then(() => { agent.destroy(); parentPort.postMessage(results); });
`;

async function sendAll(url: string, deliveries: Delivery[], deadline: number): Promise<void> {
  const payloads = deliveries.map(({ command, deliveryId }) => ({
    body: command.body,
    headers: {
      "content-type": "application/json",
      "content-length": String(Buffer.byteLength(command.body)),
      "user-agent": "GitHub-Hookshot/bench",
      "x-github-event": "issue_comment",
      "x-github-delivery": deliveryId,
      "x-github-hook-installation-target-type": "integration",
      "x-hub-signature-256": command.signature,
    },
  }));
  const worker = new Worker(SENDER_SOURCE, { eval: true, execArgv: [], workerData: { url, concurrency: CONCURRENCY, deadline, deliveries: payloads } });
  const [results] = (await once(worker, "message")) as [Array<{ sentAt: number; latencyMs: number; status: number } | undefined>];
  await worker.terminate();
  results.forEach((result, index) => {
    if (result) Object.assign(deliveries[index]!, result);
  });
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
        : body.includes("<!-- blueprint:state")
          ? "plan-start"
          : body.startsWith("Queued:")
            ? "queued"
            : body.startsWith("❌")
              ? "failure"
              : "other";

function expected(tenant: Tenant) {
  const writers = tenant.commands.filter((c) => c.who === "writer");
  return {
    reactions: writers.map((c) => c.comment.id),
    help: writers.filter((c) => c.kind === "help").length,
    status: writers.filter((c) => c.kind === "status").length,
    plans: writers.filter((c) => c.kind === "plan").length,
    refusals: tenant.commands.filter((c) => c.who === "reader").length,
  };
}

/** Cheap completeness check from the double's state, while waiting. */
function effectsComplete(tenant: Tenant): boolean {
  const want = expected(tenant);
  const { state } = tenant.view;
  if (!want.reactions.every((id) => state.reactions.some((r) => r.commentId === id && r.content === "eyes"))) return false;
  const replies = state.botComments(tenant.issue).map((c) => c.body);
  const n = (kind: ReplyKind) => replies.filter((body) => classify(body) === kind).length;
  const planned = replies.filter((body) => body.includes("Plan v1")).length;
  return n("help") >= want.help && n("status") >= want.status && n("refusal") >= want.refusals && planned >= want.plans;
}

interface ReportInput {
  github: GitHubDouble;
  model: ModelServer;
  app: AppProcess;
  tenants: Tenant[];
  deliveries: Delivery[];
  totals: Record<string, number>;
  requests: RecordedRequest[];
  sendStart: number;
  sendEnd: number;
  finishedAt: number;
  complete: boolean;
  deadlineHit: boolean;
  loopDelayP99Ms: number;
  cpu: CpuDelta | null;
  appLoop: { p50: number; p99: number; max: number } | null;
  loadBefore: number;
}

function report(input: ReportInput): void {
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
  const problems: string[] = [];
  const firstReactionMs: number[] = [];
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
    check("help", want.help);
    check("status", want.status);
    check("refusal", want.refusals);
    check("plan-start", want.plans);
    const planDone = replies.filter((reply) => reply.body.includes("Plan v1")).sort((a, b) => a.at - b.at);
    if (planDone.length < want.plans) {
      lost += want.plans - planDone.length;
      note(`installation ${tenant.id}: no Plan v1`);
    } else lastEffectAt = Math.max(lastEffectAt, planDone[want.plans - 1]!.at);
    for (const reply of replies.filter((r) => r.kind === "queued" || r.kind === "failure" || r.kind === "other")) note(`installation ${tenant.id}: unexpected reply: ${reply.body.slice(0, 100)}`);

    // Model runs: one for the writer's /plan, none for the reader's or the bot's.
    const legit = runsFor(`load-${tenant.id}:`);
    if (legit > 1) {
      duplicates += legit - 1;
      note(`installation ${tenant.id}: ${legit} model runs for one /plan`);
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
  const appErrors = input.app
    .output()
    .split("\n")
    .filter((line) => /"level":\s*(50|60)/.test(line));

  const ms = (value: number | undefined) => (value === undefined || !Number.isFinite(value) ? "n/a" : `${Math.round(value)} ms`);
  const s = (value: number) => `${(value / 1000).toFixed(1)} s`;
  const met = (ok: boolean) => (ok ? "met" : "NOT MET");
  const webhookP99 = percentile(latencies, 99);
  const firstP99 = percentile(firstReactionMs, 99);
  const allAnswered = input.complete && lost === 0;

  console.log(
    `${totals.webhooks} webhooks (${totals.commands} commands: ${totals.writer} by writers incl. ${totals.plans} /plan, ${totals.reader} by read-only users, ${totals.bot} by bots; ` +
      `${totals.sameDelivery} redelivered with the same X-GitHub-Delivery, ${totals.sameComment} as a new delivery of the same comment) ` +
      `over ${tenants.length} installations at concurrency ${CONCURRENCY}; sent in ${s(input.sendEnd - input.sendStart)}; GitHub throttling on.\n`,
  );
  const rows: Array<[string, string, string, string]> = [
    ["webhook responses 2xx", `${ok2xx} / ${deliveries.length} (${statusCounts(answered)})`, "all", met(ok2xx === deliveries.length)],
    ["webhook response p50", ms(percentile(latencies, 50)), "", ""],
    ["webhook response p99", ms(webhookP99), `≤ ${TARGETS.webhookP99Ms} ms`, met(webhookP99 !== undefined && webhookP99 <= TARGETS.webhookP99Ms)],
    ["webhook response max", ms(Math.max(...latencies)), "", ""],
    ["first 👀 per installation p50", ms(percentile(firstReactionMs, 50)), "", ""],
    ["first 👀 per installation p99", ms(firstP99), `≤ ${TARGETS.firstReactionP99Ms} ms`, met(firstP99 !== undefined && firstReactionMs.length === tenants.length && firstP99 <= TARGETS.firstReactionP99Ms)],
    ["first 👀 per installation max", ms(Math.max(...firstReactionMs)), "", ""],
    ["👀 per writer command p50", ms(percentile(ackMs, 50)), "", ""],
    ["👀 per writer command p99", ms(percentile(ackMs, 99)), "", ""],
    ["👀 per writer command max", ms(Math.max(...ackMs)), "", ""],
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
      `CPU from the first webhook to the end, on ${os.availableParallelism()} cores (${s(input.finishedAt - input.sendStart)} wall): ` +
      (input.cpu
        ? `app ${s(input.cpu.app)} + its git ${s(input.cpu.appChildren)}; bench process (double, sender, model) ${s(input.cpu.bench)} + the double's git ${s(input.cpu.benchChildren)}; ` +
          `other processes on the machine ${s(input.cpu.other)}`
        : "n/a") +
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
}

// ---------------------------------------------------------------------------------------------

/** CPU used (ms, Linux /proc): by a process, by its children it has waited for, and by the whole machine. */
interface CpuSnapshot {
  app: number;
  appChildren: number;
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
    return { app: app.own, appChildren: app.children, bench: bench.own, benchChildren: bench.children, machine: (user! + nice! + system! + irq! + softirq! + steal!) * tick };
  } catch {
    return null;
  }
}

function cpuDelta(before: CpuSnapshot | null, after: CpuSnapshot | null): CpuDelta | null {
  if (!before || !after) return null;
  const d = (key: keyof CpuSnapshot) => after[key] - before[key];
  return { app: d("app"), appChildren: d("appChildren"), bench: d("bench"), benchChildren: d("benchChildren"), machine: d("machine"), other: Math.max(0, d("machine") - d("app") - d("appChildren") - d("bench") - d("benchChildren")) };
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
