// One run of the bench in one mode: GitHub, the model and the app started; the commands typed; the
// burst sent (after the warm-up, if any); every effect waited for; the figures printed.
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { monitorEventLoopDelay, type IntervalHistogram } from "node:perf_hooks";
import type { GitHubDouble } from "../../test/e2e/double/github-server.js";
import type { AppProcess } from "../../test/e2e/support/app-process.js";
import { startModelServer, type ModelServer } from "../../test/helpers/model-server.js";
import {
  installationIds,
  makeTenants,
  modelReply,
  schedule,
  totalsOf,
  type Delivery,
  type Tenant,
} from "./conditions.js";
import { HARD_DEADLINE_MS, QUIET_MS, type Mode } from "./config.js";
import { effectsComplete } from "./effects.js";
import { sleep } from "./format.js";
import { echoBotComments, startGitHub, type Echo } from "./github.js";
import {
  cpuDelta,
  cpuSnapshot,
  intakeThreadsSince,
  readAppLoop,
  threadTimes,
  type CpuDelta,
  type CpuSnapshot,
  type ThreadTimes,
} from "./machine.js";
import { killOnSignal, startProcesses, stopProcesses, type Processes } from "./processes.js";
import { report, type Row } from "./report.js";
import { sendAll, untilReady, warmUp, type Payload } from "./sender.js";

export interface Run {
  mode: Mode;
  warmUp: number;
  rows: Row[];
  /** CPU from the first webhook to the end, by process (see machine.ts). */
  cpu: CpuDelta | null;
}

/**
 * One run in `mode`, of the app built in `root` (this checkout by default; BENCH_BASELINE's is another:
 * bench/support/baseline.mjs).
 */
export async function runMode(mode: Mode, warmUpCount: number, root?: string): Promise<Run> {
  const loadBefore = os.loadavg()[0] ?? 0;
  const deadline = Date.now() + HARD_DEADLINE_MS;
  const scratch = mkdtempSync(path.join(os.tmpdir(), "blueprint-bench-load-"));
  const loopDelay = monitorEventLoopDelay({ resolution: 10 });
  const processes: Processes = { workers: [] };
  const stopKillingOnSignal = killOnSignal(processes, scratch);
  let github: GitHubDouble | undefined;
  let model: ModelServer | undefined;
  try {
    // 1. GitHub: one installation and repository each, one or two issues each, the same people everywhere; the model;
    // the app.
    const ids = installationIds();
    github = await startGitHub(ids);
    model = await startModelServer(Array.from({ length: 5_000 }, () => modelReply));
    const probeFile = path.join(scratch, "app-loop.json");
    const app = await startProcesses(processes, mode, github, model, scratch, probeFile, root);
    // The run starts once /healthz says every process is up, as an operator would wait after a restart
    // (before it, a burst would measure how long the job runner takes to load).
    await untilReady(app.url, deadline);

    // 2. The commands, typed on GitHub before any webhook goes out.
    const tenants = makeTenants(github, ids);
    const deliveries = schedule(tenants);
    const warm = warmUp(tenants, warmUpCount);
    const baseline = github.requests.length;
    // Comments people (and other bots) typed: never echoed back as the app's.
    const typed = new Set([...github.state.comments.map((c) => c.id), ...warm.commentIds]);

    // 3. Deliver them, CONCURRENCY at a time, echoing every comment the app posts back as a webhook;
    //    after the warm-up of bots' comments, if any (see warmUp), which the figures leave out.
    const sent = await burst(app, tenants, deliveries, warm.deliveries, typed, deadline, loopDelay);

    // 4. Wait until every command has its effect, then until the app has been quiet a while (late duplicates).
    const complete = await settle(github, tenants, deadline);
    const echoes = (await sent.echo?.stop()) ?? { sent: 0, ok: 0 };
    loopDelay.disable();
    const finishedAt = Date.now();
    const cpu = cpuDelta(sent.cpuBefore, cpuSnapshot(app.pid));
    await sleep(300); // one more probe dump

    // 5. Figures.
    const rows = report({
      github,
      model,
      app,
      workers: processes.workers,
      tenants,
      deliveries,
      totals: totalsOf(tenants, deliveries),
      warmUp: warmUpCount,
      echoes,
      requests: github.requests.slice(baseline),
      sendStart: sent.sendStart,
      sendEnd: sent.sendEnd,
      finishedAt,
      complete,
      deadlineHit: finishedAt >= deadline,
      loopDelayP99Ms: loopDelay.percentile(99) / 1e6,
      cpu,
      appLoop: readAppLoop(probeFile),
      intakeThread: sent.intakeThread,
      intakeThreads: sent.intakeThreads,
      burstCpu: sent.burstCpu,
      loadBefore,
    });
    return { mode, warmUp: warmUpCount, rows, cpu };
  } finally {
    await stopProcesses(processes);
    await model?.close().catch(() => undefined);
    await github?.stop().catch(() => undefined);
    rmSync(scratch, { recursive: true, force: true });
    stopKillingOnSignal();
  }
}

interface Burst {
  sendStart: number;
  sendEnd: number;
  cpuBefore: CpuSnapshot | null;
  echo: Echo | undefined;
  /** The intake's event-loop thread while the webhooks went out, and its other threads that ran at least 5 ms. */
  intakeThread: ThreadTimes | null;
  intakeThreads: ThreadTimes[];
  burstCpu: ReturnType<typeof cpuDelta>;
}

/**
 * Sends the warm-up and the burst; measuring (and echoing the app's comments) starts as the burst's first webhook goes
 * out.
 */
async function burst(
  app: AppProcess,
  tenants: Tenant[],
  deliveries: Delivery[],
  warm: Payload[],
  typed: Set<number>,
  deadline: number,
  loopDelay: IntervalHistogram,
): Promise<Burst> {
  let cpuBefore: CpuSnapshot | null = null;
  let threadsBefore = new Map<string, ThreadTimes>();
  let sendStart = 0;
  let echo: Echo | undefined;
  await sendAll(app.webhookUrl, deliveries, warm, deadline, () => {
    loopDelay.enable();
    process.kill(app.pid, "SIGUSR2"); // the probe starts afresh
    cpuBefore = cpuSnapshot(app.pid);
    threadsBefore = threadTimes(app.pid);
    sendStart = Date.now();
    echo = echoBotComments(app.webhookUrl, tenants, typed);
  });
  const sendEnd = Date.now();
  const intake = intakeThreadsSince(app.pid, threadsBefore);
  return {
    sendStart,
    sendEnd,
    cpuBefore,
    echo,
    intakeThread: intake.loop,
    intakeThreads: intake.others,
    burstCpu: cpuDelta(cpuBefore, cpuSnapshot(app.pid)),
  };
}

/**
 * Until every command has its effect (true), or the deadline (false); then until the double has seen no call for
 * QUIET_MS.
 */
async function settle(github: GitHubDouble, tenants: Tenant[], deadline: number): Promise<boolean> {
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
  return complete;
}
