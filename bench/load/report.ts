// One run's figures: the table against the targets, then what helps to look into them.
import { writeFileSync } from "node:fs";
import os from "node:os";
import type { GitHubDouble, RecordedRequest } from "../../test/e2e/double/github-server.js";
import type { AppProcess } from "../../test/e2e/support/app-process.js";
import type { WorkerProcess } from "../../test/e2e/support/worker-process.js";
import type { ModelServer } from "../../test/helpers/model-server.js";
import type { Delivery, Tenant, Totals } from "./conditions.js";
import { CONCURRENCY, JOB_CONCURRENCY, QUIET_MS, TARGETS } from "./config.js";
import { classify } from "./effects.js";
import { met, ms, percentile, printTable, seconds } from "./format.js";
import { cpuLine, type AppLoop, type CpuDelta, type ThreadTimes } from "./machine.js";
import { bodyOf, modelRuns, pacing, seenBy, tally, type Seen, type Tally } from "./tally.js";

export interface ReportInput {
  github: GitHubDouble;
  model: ModelServer;
  app: AppProcess;
  workers: WorkerProcess[];
  tenants: Tenant[];
  deliveries: Delivery[];
  totals: Totals;
  /** Bots' comments sent before the burst, unmeasured (0: a process that has just started). */
  warmUp: number;
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
  /**
   * The intake's event-loop thread while the webhooks went out: time it ran, and time it was ready but waited for a
   * core.
   */
  intakeThread: ThreadTimes | null;
  /**
   * The intake process's other threads that ran at least 5 ms meanwhile (V8's garbage-collection and
   * compiler threads), busiest first.
   */
  intakeThreads: ThreadTimes[];
  burstCpu: CpuDelta | null;
  loadBefore: number;
}

/** A row of the table: figure, value, target, and whether it is met ("" when the figure has no target). */
export type Row = [string, string, string, string];

/** Prints one run's figures and returns its table's rows. */
export function report(input: ReportInput): Row[] {
  const seen = seenBy(input.tenants, input.requests);
  const runs = modelRuns(input.model.requests);
  const counted = tally(input.tenants, input.deliveries, seen, runs);
  console.log(headline(input));
  const rows = figureRows(input, counted, runs);
  printTable(["figure", "value", "target", ""], rows);
  const appErrors = [input.app, ...input.workers]
    .flatMap((process) => process.output().split("\n"))
    .filter((line) => /"level":\s*(50|60)/.test(line));
  console.log(details(input, counted, appErrors.length));
  if (process.env.BENCH_LOAD_APP_LOG) writeFileSync(process.env.BENCH_LOAD_APP_LOG, input.app.output());
  if (process.env.BENCH_LOAD_TRACE) printTrace(input, seen, Number(process.env.BENCH_LOAD_TRACE));
  if (counted.problems.length > 0)
    console.log(`\nfirst problems seen:\n${counted.problems.map((p) => `  - ${p}`).join("\n")}`);
  if (appErrors.length > 0)
    console.log(
      `\nfirst app errors:\n${appErrors
        .slice(0, 3)
        .map((line) => `  ${line.slice(0, 300)}`)
        .join("\n")}`,
    );
  return rows;
}

/** How the process was met: warm, or as it has just started. */
export const conditionOf = (warmUp: number): string =>
  warmUp === 0 ? "a process that has just started" : `after ${warmUp} bots' comments`;

function headline(input: ReportInput): string {
  const { totals } = input;
  const warm =
    input.warmUp === 0
      ? "no warm-up: the burst is the app's first traffic once /healthz says ready"
      : `after ${input.warmUp} bots' comments (unmeasured warm-up)`;
  return (
    `${totals.webhooks} webhooks (${totals.commands} commands: ${totals.writer} by writers incl. ${totals.plans} /plan, ${totals.reader} by read-only users, ${totals.bot} by bots; ` +
    `${totals.sameDelivery} redelivered with the same X-GitHub-Delivery) on ${totals.issues} issues ` +
    `over ${input.tenants.length} installations at concurrency ${CONCURRENCY}, BLUEPRINT_CONCURRENCY=${JOB_CONCURRENCY}, ${warm}; sent in ${seconds(input.sendEnd - input.sendStart)}; GitHub throttling on; ` +
    `${input.echoes.sent} of the app's comments echoed back as webhooks (${input.echoes.ok} answered 2xx).\n`
  );
}

function figureRows(input: ReportInput, t: Tally, runs: string[]): Row[] {
  const { tenants, deliveries, requests, totals } = input;
  const answered = deliveries.filter((d) => d.latencyMs !== undefined);
  const latencies = answered.map((d) => d.latencyMs ?? NaN);
  const ok2xx = answered.filter((d) => (d.status ?? 0) >= 200 && (d.status ?? 0) < 300).length;
  const webhookP99 = percentile(latencies, 99);
  const firstP99 = percentile(t.firstReactionMs, 99);
  const jobs = requests.filter(
    (r) =>
      r.kind === "rest" &&
      r.method === "POST" &&
      /\/issues\/\d+\/comments$/.test(r.path) &&
      classify(bodyOf(r)) === "plan-start",
  ).length;
  const writes = pacing(requests);
  const tokenGrants = requests.filter((r) => r.kind === "rest" && /\/access_tokens$/.test(r.path) && r.status === 201);
  return [
    [
      "webhook responses 2xx",
      `${ok2xx} / ${deliveries.length} (${statusCounts(answered)})`,
      "all",
      met(ok2xx === deliveries.length),
    ],
    ["webhook response p50", ms(percentile(latencies, 50)), "", ""],
    [
      "webhook response p99",
      ms(webhookP99),
      `≤ ${TARGETS.webhookP99Ms} ms`,
      met(webhookP99 !== undefined && webhookP99 <= TARGETS.webhookP99Ms),
    ],
    ["webhook response max", ms(Math.max(...latencies)), "", ""],
    ["first 👀 per installation p50", ms(percentile(t.firstReactionMs, 50)), "", ""],
    [
      "first 👀 per installation p99",
      ms(firstP99),
      `≤ ${TARGETS.firstReactionP99Ms} ms`,
      met(
        firstP99 !== undefined && t.firstReactionMs.length === tenants.length && firstP99 <= TARGETS.firstReactionP99Ms,
      ),
    ],
    ["first 👀 per installation max", ms(Math.max(...t.firstReactionMs)), "", ""],
    ["first 👀 per comment p50", ms(percentile(t.ackMs, 50)), "", ""],
    ["first 👀 per comment p99", ms(percentile(t.ackMs, 99)), "", ""],
    ["first 👀 per comment max", ms(Math.max(...t.ackMs)), "", ""],
    ['"Queued" notices', String(t.queued), "", ""],
    [
      "every command answered, after the 1st webhook",
      t.lastEffectAt > 0 ? seconds(t.lastEffectAt - input.sendStart) : "n/a",
      "all answered",
      met(input.complete && t.lost === 0),
    ],
    [
      "jobs started (planning runs)",
      `${runs.length} model runs, ${jobs} plan comments`,
      `${totals.plans}`,
      met(runs.length === totals.plans && jobs === totals.plans),
    ],
    ["duplicates", String(t.duplicates), "0", met(t.duplicates === 0)],
    ["unauthorized runs", String(t.unauthorized), "0", met(t.unauthorized === 0)],
    ["lost commands", String(t.lost), "0", met(t.lost === 0)],
    [
      "GitHub writes, one installation",
      `peak ${writes.perInstallationPeak} in 1 s; gap p50 ${ms(writes.medianGap)}, min ${ms(writes.minGap)}`,
      "paced (~1 s apart)",
      met(writes.medianGap !== undefined && writes.medianGap >= 900),
    ],
    [
      "GitHub writes, all installations",
      `peak ${writes.overallPeak} in 1 s (${writes.writes} writes)`,
      "> one installation's",
      met(writes.overallPeak > writes.perInstallationPeak),
    ],
    [
      "installation tokens minted",
      `${tokenGrants.length}`,
      `${tenants.length}`,
      met(tokenGrants.length >= tenants.length),
    ],
  ];
}

/** Below the table: what helps to look into a figure (where the intake's CPU went, its stalls, the 👀's path). */
function details(input: ReportInput, t: Tally, appErrors: number): string {
  const { sendStart, intakeThread } = input;
  const s = seconds;
  const burstStalls = (input.appLoop?.stalls ?? []).filter(
    (stall) => stall.at >= sendStart - 100 && stall.at <= input.sendEnd,
  );
  const slowest = input.deliveries
    .filter((d) => d.latencyMs !== undefined)
    .sort((a, b) => (b.latencyMs ?? 0) - (a.latencyMs ?? 0))
    .slice(0, 5);
  const path = (values: number[]) => `${ms(percentile(values, 50))} / ${ms(percentile(values, 99))}`;
  return (
    `\nalso: ${input.requests.length} calls to the double (${input.github.violations.length} undocumented or malformed, ${input.github.unimplemented.length} unimplemented); ` +
    `${appErrors} error lines in the app's log; ` +
    `app event-loop delay ${input.appLoop ? `p50 ${input.appLoop.p50} ms, p99 ${input.appLoop.p99} ms, max ${input.appLoop.max} ms` : "n/a"}; ` +
    `the double's event-loop delay p99 ${input.loopDelayP99Ms.toFixed(1)} ms.\n` +
    `While the webhooks went out, the app's event-loop stalls over 50 ms: ${burstStalls.length === 0 ? "none" : burstStalls.map((stall) => `+${stall.at - sendStart} ms for ${stall.ms} ms`).join(", ")}; ` +
    `the intake's event-loop thread meanwhile ran ${intakeThread ? `${ms(intakeThread.onCpu)} and waited ${ms(intakeThread.waiting)} for a core` : "n/a"}, ` +
    `its other threads (V8's garbage collection and compilers) ran ${input.intakeThreads.map((thread) => ms(thread.onCpu)).join(" + ") || "0 ms"}; ` +
    `CPU meanwhile: ${input.burstCpu ? cpuLine(input.burstCpu) : "n/a"}; ` +
    `its five slowest answers (sent at, took): ${slowest.map((d) => `+${(d.sentAt ?? 0) - sendStart} ms, ${ms(d.latencyMs)}`).join("; ")}.\n` +
    `The first 👀's path per installation, p50 / p99 (times the double saw): first webhook → token minted ${path(t.firstPath.token)}, ` +
    `→ first permission read ${path(t.firstPath.permission)}, → 👀 ${path(t.firstPath.reaction)}.\n` +
    `CPU from the first webhook to the end, on ${os.availableParallelism()} cores (${s(input.finishedAt - sendStart)} wall): ` +
    (input.cpu ? cpuLine(input.cpu) : "n/a") +
    `; load average before the run ${input.loadBefore.toFixed(1)}.\n` +
    `Run ${input.deadlineHit ? "STOPPED AT THE HARD DEADLINE" : input.complete ? "complete" : "incomplete"} after ${s(input.finishedAt - sendStart)} (incl. up to ${QUIET_MS / 1000} s waiting for quiet).`
  );
}

/**
 * BENCH_LOAD_TRACE: one installation's timeline, the slow webhooks, and latency by second sent, for looking into a
 * figure.
 */
function printTrace(input: ReportInput, seen: Seen, id: number): void {
  const { deliveries, sendStart } = input;
  const tenant = input.tenants.find((t) => t.id === id) ?? input.tenants[0];
  if (!tenant) return;
  const own = deliveries.filter((d) => d.command.installation === tenant.id);
  const zero = Math.min(...own.map((d) => d.sentAt ?? Infinity));
  const lines = [
    ...own.map((d) => ({
      at: d.sentAt ?? 0,
      text: `webhook ${d.command.who} /${d.command.kind} comment ${d.command.comment.id} (${d.redelivery}) → ${d.status} in ${Math.round(d.latencyMs ?? 0)} ms`,
    })),
    ...seen.requests
      .filter(
        (r) =>
          seen.tenantOf(r) === tenant ||
          r.installationId === tenant.id ||
          r.path.includes(`/installations/${tenant.id}/`),
      )
      .map((r) => ({
        at: r.at ?? 0,
        text: `${r.status} ${r.kind} ${r.method} ${r.path.slice(0, 90)} ${r.kind === "rest" && r.method !== "GET" ? classify(bodyOf(r)) : ""}`,
      })),
  ].sort((a, b) => a.at - b.at);
  const bySecond = new Map<number, number[]>();
  for (const d of deliveries)
    if (d.sentAt !== undefined)
      bySecond.set(Math.floor((d.sentAt - sendStart) / 1000), [
        ...(bySecond.get(Math.floor((d.sentAt - sendStart) / 1000)) ?? []),
        d.latencyMs ?? NaN,
      ]);
  const slow = deliveries.filter((d) => (d.latencyMs ?? 0) > 500).slice(0, 15);
  console.log(
    `\nslow webhooks: ${slow.map((d) => `+${(d.sentAt ?? 0) - sendStart} ms ${d.status} ${Math.round(d.latencyMs ?? 0)} ms ${d.command.who}/${d.command.kind}/${d.redelivery}`).join("; ")}`,
  );
  console.log(
    `\nwebhook latency by second sent: ${[...bySecond.entries()].map(([sec, l]) => `${sec}s: n=${l.length} p50 ${ms(percentile(l, 50))} max ${ms(Math.max(...l))}`).join("; ")}`,
  );
  console.log(
    `\ntimeline of installation ${tenant.id} (ms after its first webhook):\n${lines.map((l) => `  ${String(l.at - zero).padStart(6)}  ${l.text}`).join("\n")}`,
  );
}

function statusCounts(deliveries: Delivery[]): string {
  const counts = new Map<number, number>();
  for (const d of deliveries) counts.set(d.status ?? 0, (counts.get(d.status ?? 0) ?? 0) + 1);
  return [...counts.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([status, n]) => `${status === 0 ? "no answer" : status}: ${n}`)
    .join(", ");
}
