import { appendFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { git, latestThreadState, runBlueprint } from "./cli-driver.js";
import { checkRunner, runHiddenCheck, type CheckResult } from "./hidden-check.js";
import { goldFiles, type EvalItem } from "./items.js";
import type { Judge, JudgeReport } from "./judge.js";
import type { EvalSandbox } from "./sandbox.js";
import { emptyUsage, startMeteringProxy, type MeteringProxy, type PhaseUsage } from "./metering-proxy.js";
import { addUsage, costOf, fileOverlap, normalisePath, type Prices } from "./scoring.js";
import { writeStartingTree } from "./smoke-sources.js";

export interface RunSettings {
  /** The real model endpoint (OpenAI-compatible); the CLI talks to it through a metering proxy. */
  baseUrl: string;
  apiKey: string | undefined;
  model: string | undefined;
  /** One scripted round of feedback between plan and build. */
  feedback: string | undefined;
  prices: Prices | null;
  /** Where each run's CLI log goes. */
  logDir: string;
  /** Keep each run's scratch repository (its path is in the log) instead of removing it. */
  keep: boolean;
  /** Extra environment for the CLI (limits, sandbox); model settings are set by the harness. */
  env: Record<string, string>;
  /** The limit on one run: checkout, install, plan, build and judging together. */
  taskTimeoutMs: number;
  /** Checks out, installs and judges SWE-format instances (null for the smoke suite). */
  judge: Judge | null;
  /** Where installs, tests and hidden checks run (sandbox.ts). */
  sandbox: EvalSandbox;
}

export interface TaskRun {
  task: string;
  kind: EvalItem["kind"];
  run: number;
  plan: {
    valid: boolean;
    /** Valid, and the first plan the model submitted was accepted (no refused submit_plan before it). */
    firstTry: boolean;
    /** Plans the CLI refused (submit_plan answered with problems) before the one it kept. */
    rejected: number;
    revision: number | null;
    steps: number;
    files: string[];
    /** Against the files the real change touched (the gold patch's, for SWE instances); null when unknown. */
    recall: number | null;
    precision: number | null;
  };
  /**
   * Steps finished; steps the agent reported blocked; steps that failed (limit hit, model or push error);
   * the files the build changed, those of them no plan step names, and whether there were none.
   */
  build: {
    ran: boolean;
    status: string | null;
    stepsDone: number;
    stepsBlocked: number;
    stepsFailed: number;
    files: string[];
    outsidePlan: string[];
    inPlan: boolean | null;
  };
  /** Questions the agent asked (ask_user); each got the scripted "no one to ask" answer. */
  questions: { plan: number; build: number };
  /** The verdict: the smoke task's hidden check, or the SWE judge (`passed` = resolved). */
  check: {
    ran: boolean;
    passed: boolean;
    exitCode: number | null;
    output: string;
    isolation: "bwrap" | "plain" | null;
  };
  /** For SWE instances: which FAIL_TO_PASS and PASS_TO_PASS tests passed on the built tree. */
  tests: Pick<JudgeReport, "FAIL_TO_PASS" | "PASS_TO_PASS"> | null;
  usage: { plan: PhaseUsage; revise: PhaseUsage; build: PhaseUsage; total: PhaseUsage };
  cost: number | null;
  costByPhase: { plan: number | null; revise: number | null; build: number | null };
  seconds: { setup: number; plan: number; revise: number; build: number; check: number; total: number };
  exitCodes: { plan: number | null; revise: number | null; build: number | null };
  log: string;
  /** Why the run failed when the cause is not the model's work itself: "time limit (N s)", an install that failed. */
  failure: string | null;
  /** Set when the harness itself could not complete the run (not a model or build failure). */
  error: string | null;
}

const MAX_ANSWERS = 2;

/** Scratch repositories of the runs in progress, removed if the eval is interrupted (unless --keep). */
const scratches = new Set<string>();

export function removeScratchRepositories(): void {
  for (const dir of scratches) rmSync(dir, { recursive: true, force: true });
  scratches.clear();
}
export const NO_ONE_TO_ASK =
  "No one can answer questions during this evaluation. Make the most reasonable assumption, say which in your summary, and continue.";

/**
 * One item, once: a fresh repository (the smoke task's earlier version, or the instance at base_commit
 * with its dependencies installed), `blueprint plan` (then `revise`), `blueprint build`, then the
 * verdict: the hidden check, or the SWE judge on the built tree. All of it within `taskTimeoutMs`.
 */
export async function runTask(item: EvalItem, run: number, settings: RunSettings): Promise<TaskRun> {
  const started = performance.now();
  const limit = new AbortController();
  const timer = setTimeout(() => limit.abort(), settings.taskTimeoutMs);
  const { signal } = limit;
  const remainingMs = () => Math.max(1_000, settings.taskTimeoutMs - (performance.now() - started));
  const scratch = mkdtempSync(path.join(os.tmpdir(), `blueprint-eval-${item.id.replace(/[^\w.-]/g, "_")}-`));
  if (!settings.keep) scratches.add(scratch);
  const checkout = path.join(scratch, "repo");
  mkdirSync(settings.logDir, { recursive: true });
  const log = path.join(settings.logDir, `${item.id.replace(/[^\w.-]/g, "_")}-run${run}.log`);
  let proxy: MeteringProxy | null = null;
  const facts: RunFacts = {
    planned: null,
    built: null,
    buildRan: false,
    check: null,
    tests: null,
    changed: [],
    rejected: 0,
    questions: { plan: 0, build: 0 },
    seconds: { setup: 0, plan: 0, revise: 0, build: 0, check: 0, total: 0 },
    exitCodes: { plan: null, revise: null, build: null },
    log,
    started,
    failure: null,
    usage: () => emptyUsage(),
  };
  try {
    // 1. A fresh repository: the earlier version committed on `main`, or the instance at base_commit, installed.
    const prepared = await prepare(item, checkout, settings, { signal, remainingMs, log });
    facts.seconds.setup = (performance.now() - started) / 1000;
    if (!prepared.ok) {
      facts.failure = signal.aborted ? timeLimit(settings) : prepared.reason;
      return score(item, run, facts, settings);
    }

    // 2. and 3. The CLI as a user runs it, with the model behind a proxy that counts tokens.
    const meter = await startMeteringProxy(settings.baseUrl);
    proxy = meter;
    await planAndBuild(item, run, meter, facts, { checkout, scratch, log, signal, settings });

    // 4. The verdict on what the build committed (whatever it got to).
    facts.built = await latestThreadState(checkout);
    const branch = facts.built?.branch;
    if (facts.buildRan && branch && (await branchExists(checkout, branch)) && !signal.aborted) {
      facts.changed = (await git(checkout, ["diff", "--name-only", prepared.base, `refs/heads/${branch}`]))
        .split("\n")
        .filter((file) => file !== "");
      const judged = await verdict(item, { checkout, scratch, branch, base: prepared.base }, settings, {
        signal,
        remainingMs,
        log,
      });
      facts.check = judged.check;
      facts.tests = judged.tests;
      facts.failure = judged.failure;
      facts.seconds.check = judged.check.seconds;
    }
    if (signal.aborted) facts.failure = timeLimit(settings);
    return score(item, run, facts, settings);
  } catch (error) {
    if (!signal.aborted) throw error;
    facts.failure = timeLimit(settings);
    return score(item, run, facts, settings);
  } finally {
    clearTimeout(timer);
    await proxy?.close();
    if (settings.keep) appendFileSync(log, `scratch repository kept: ${checkout}\n`);
    else rmSync(scratch, { recursive: true, force: true });
    scratches.delete(scratch);
  }
}

interface CliContext {
  checkout: string;
  scratch: string;
  log: string;
  signal: AbortSignal;
  settings: RunSettings;
}

/**
 * `blueprint plan` (answering its questions, then one `revise` round with --feedback), then
 * `blueprint build` when planning left a plan ready for approval; what happened goes into `facts`.
 */
async function planAndBuild(
  item: EvalItem,
  run: number,
  meter: MeteringProxy,
  facts: RunFacts,
  { checkout, scratch, log, signal, settings }: CliContext,
): Promise<void> {
  // 2. Planning.
  facts.usage = (phase) => meter.usage(phase);
  appendFileSync(
    log,
    `# ${item.id} run ${run}: model endpoint ${settings.baseUrl}, reached through the eval's metering proxy ${meter.url}\n\n`,
  );
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH ?? "",
    HOME: path.join(scratch, "home"),
    BLUEPRINT_WORKDIR: path.join(scratch, "work"),
    ...settings.env,
    OPENAI_BASE_URL: meter.url,
    OPENAI_API_KEY: settings.apiKey ?? "not-set",
    ...(settings.model ? { BLUEPRINT_MODEL: settings.model } : {}),
  };
  const cli = (phase: string, args: string[]) => {
    meter.setPhase(phase);
    return runBlueprint(args, { cwd: checkout, env, logFile: log, signal });
  };
  const { seconds, exitCodes, questions } = facts;
  // Nobody is at the terminal: a question gets one scripted answer, at most MAX_ANSWERS times per phase.
  const answerQuestions = async (phase: "plan" | "revise" | "build"): Promise<number> => {
    let asked = 0;
    while (
      !signal.aborted &&
      asked < MAX_ANSWERS &&
      (await latestThreadState(checkout))?.status === "awaiting_answer"
    ) {
      asked += 1;
      const answer = await cli(phase, ["answer", NO_ONE_TO_ASK]);
      seconds[phase] += answer.seconds;
    }
    return asked;
  };
  const planRun = await cli("plan", ["plan", issueOf(item)]);
  seconds.plan = planRun.seconds;
  exitCodes.plan = planRun.exitCode;
  questions.plan = await answerQuestions("plan");
  facts.rejected = meter.rejectedPlans("plan");
  if (settings.feedback && (await latestThreadState(checkout))?.plan && !signal.aborted) {
    const revise = await cli("revise", ["revise", settings.feedback]);
    seconds.revise = revise.seconds;
    exitCodes.revise = revise.exitCode;
    questions.plan += await answerQuestions("revise");
  }
  // 3. Build only a plan that is ready for approval.
  facts.planned = await latestThreadState(checkout);
  if (facts.planned?.plan && facts.planned.status === "pending" && !signal.aborted) {
    facts.buildRan = true;
    const build = await cli("build", ["build"]);
    seconds.build = build.seconds;
    exitCodes.build = build.exitCode;
    questions.build = await answerQuestions("build");
  }
}

function timeLimit(settings: RunSettings): string {
  return `time limit (${Math.round(settings.taskTimeoutMs / 1000)} s)`;
}

function issueOf(item: EvalItem): string {
  return item.kind === "smoke" ? item.task.issue : item.instance.problem_statement;
}

interface Limits {
  signal: AbortSignal;
  remainingMs(): number;
  log: string;
}

type Prepared = { ok: true; base: string } | { ok: false; reason: string };

async function prepare(item: EvalItem, checkout: string, settings: RunSettings, limits: Limits): Promise<Prepared> {
  if (item.kind === "smoke") {
    mkdirSync(checkout);
    writeStartingTree(await item.sources(), checkout);
    await git(checkout, ["init", "-q", "-b", "main"]);
    await git(checkout, ["add", "-A"]);
    await git(checkout, ["commit", "-q", "-m", `${item.task.meta.package} ${item.task.meta.from}`]);
    return { ok: true, base: (await git(checkout, ["rev-parse", "HEAD"])).trim() };
  }
  const judge = needJudge(settings);
  await judge.checkoutInstance(item.instance, item.source, checkout);
  // The CLI plans on a branch: name the base commit's (the checkout may be a detached HEAD).
  await git(checkout, ["checkout", "-q", "-B", "eval-base"]);
  const base = (await git(checkout, ["rev-parse", "HEAD"])).trim();
  const installed = await judge.installDependencies(item.instance, checkout, {
    timeoutMs: limits.remainingMs(),
    signal: limits.signal,
    sandbox: settings.sandbox,
  });
  appendFileSync(
    limits.log,
    `# ${item.id}: dependencies ${installed.ok ? "installed" : "did not install"}\n${installed.log.slice(-4_000)}\n\n`,
  );
  return installed.ok ? { ok: true, base } : { ok: false, reason: "dependencies did not install (see the log)" };
}

function needJudge(settings: RunSettings): Judge {
  if (!settings.judge) throw new Error("SWE-format instances need the judge (eval/swe/)");
  return settings.judge;
}

interface Verdict {
  check: CheckResult;
  tests: TaskRun["tests"];
  failure: string | null;
}

async function verdict(
  item: EvalItem,
  where: { checkout: string; scratch: string; branch: string; base: string },
  settings: RunSettings,
  limits: Limits,
): Promise<Verdict> {
  if (item.kind === "smoke") {
    // In a clean clone of the build branch.
    const tree = path.join(where.scratch, "checked");
    await git(where.scratch, ["clone", "-q", "--branch", where.branch, where.checkout, tree]);
    const check = await runHiddenCheck((await item.sources()).check, tree, checkRunner(settings.sandbox), {
      timeoutMs: limits.remainingMs(),
      signal: limits.signal,
    });
    return { check, tests: null, failure: null };
  }
  // The build's commits, applied on the installed tree at base_commit: the judge then adds test_patch and runs the
  // tests.
  const started = performance.now();
  const patch = path.join(where.scratch, "build.patch");
  writeFileSync(patch, await git(where.checkout, ["diff", "--binary", where.base, `refs/heads/${where.branch}`]));
  await git(where.checkout, ["apply", "--whitespace=nowarn", patch]);
  const report = await needJudge(settings).judgeInstance(item.instance, where.checkout, {
    timeoutMs: limits.remainingMs(),
    signal: limits.signal,
    sandbox: settings.sandbox,
  });
  appendFileSync(
    limits.log,
    `# judge: ${report.resolved ? "resolved" : "not resolved"}${report.error ? ` (${report.error})` : ""}\n${report.log.slice(-8_000)}\n`,
  );
  const check: CheckResult = {
    passed: report.resolved,
    exitCode: null,
    output:
      report.error ??
      `FAIL_TO_PASS ${report.FAIL_TO_PASS.success.length}/${report.FAIL_TO_PASS.success.length + report.FAIL_TO_PASS.failure.length}, PASS_TO_PASS ${report.PASS_TO_PASS.success.length}/${report.PASS_TO_PASS.success.length + report.PASS_TO_PASS.failure.length}`,
    seconds: (performance.now() - started) / 1000,
    isolation: settings.sandbox.bwrap ? "bwrap" : "plain",
  };
  return {
    check,
    tests: { FAIL_TO_PASS: report.FAIL_TO_PASS, PASS_TO_PASS: report.PASS_TO_PASS },
    failure: report.error ?? null,
  };
}

/** The build records a step the agent reported blocked as failed, with the reason "blocked: …". */
function isBlocked(reason: string | undefined): boolean {
  return reason?.startsWith("blocked:") ?? false;
}

async function branchExists(checkout: string, branch: string): Promise<boolean> {
  return git(checkout, ["rev-parse", "--verify", "--quiet", `refs/heads/${branch}`]).then(
    () => true,
    () => false,
  );
}

interface RunFacts {
  planned: Awaited<ReturnType<typeof latestThreadState>>;
  built: Awaited<ReturnType<typeof latestThreadState>>;
  buildRan: boolean;
  check: CheckResult | null;
  tests: TaskRun["tests"];
  /** Files the build branch changed against the base. */
  changed: string[];
  rejected: number;
  questions: TaskRun["questions"];
  seconds: TaskRun["seconds"];
  exitCodes: TaskRun["exitCodes"];
  log: string;
  started: number;
  failure: string | null;
  usage(phase: string): PhaseUsage;
}

function score(item: EvalItem, run: number, facts: RunFacts, settings: RunSettings): TaskRun {
  const plan = facts.planned?.plan ?? null;
  const valid = plan !== null && facts.planned?.status === "pending";
  const files = plan ? [...new Set(plan.steps.flatMap((step) => step.files))] : [];
  const gold = goldFiles(item, settings.judge);
  const overlap = gold ? fileOverlap(valid ? files : [], gold) : { recall: null, precision: null };
  const planned = new Set(files.map(normalisePath));
  const outsidePlan = facts.changed.filter((file) => !planned.has(normalisePath(file)));
  const steps = Object.values(facts.built?.steps ?? {});
  const usage = {
    plan: facts.usage("plan"),
    revise: facts.usage("revise"),
    build: facts.usage("build"),
    total: emptyUsage(),
  };
  usage.total = addUsage(usage.plan, usage.revise, usage.build);
  const timedOut = facts.failure?.startsWith("time limit") ?? false;
  return {
    task: item.id,
    kind: item.kind,
    run,
    plan: {
      valid,
      firstTry: valid && facts.rejected === 0,
      rejected: facts.rejected,
      revision: facts.planned?.revision ?? null,
      steps: plan?.steps.length ?? 0,
      files,
      recall: overlap.recall,
      precision: overlap.precision,
    },
    build: {
      ran: facts.buildRan,
      status: facts.buildRan ? (facts.built?.status ?? null) : null,
      stepsDone: facts.buildRan ? steps.filter((step) => step.status === "done").length : 0,
      stepsBlocked: facts.buildRan
        ? steps.filter((step) => step.status === "failed" && isBlocked(step.reason)).length
        : 0,
      stepsFailed: facts.buildRan
        ? steps.filter((step) => step.status === "failed" && !isBlocked(step.reason)).length
        : 0,
      files: facts.changed,
      outsidePlan,
      inPlan: facts.buildRan && facts.changed.length > 0 ? outsidePlan.length === 0 : null,
    },
    questions: facts.questions,
    check: {
      ran: facts.check !== null,
      // Past the time limit nothing counts, whatever finished before the cut.
      passed: (facts.check?.passed ?? false) && !timedOut,
      exitCode: facts.check?.exitCode ?? null,
      output: facts.check?.output ?? "",
      isolation: item.kind === "smoke" ? (facts.check?.isolation ?? null) : null,
    },
    tests: facts.tests,
    usage,
    cost: costOf(usage.total, settings.prices),
    costByPhase: {
      plan: costOf(usage.plan, settings.prices),
      revise: costOf(usage.revise, settings.prices),
      build: costOf(usage.build, settings.prices),
    },
    seconds: { ...facts.seconds, total: (performance.now() - facts.started) / 1000 },
    exitCodes: facts.exitCodes,
    log: facts.log,
    failure: facts.failure,
    error: null,
  };
}

/** A run the harness could not complete (e.g. git or the proxy failed): it counts as a failure, with the reason. */
export function harnessFailure(item: Pick<EvalItem, "id" | "kind">, run: number, error: unknown): TaskRun {
  const none = emptyUsage();
  return {
    task: item.id,
    kind: item.kind,
    run,
    plan: {
      valid: false,
      firstTry: false,
      rejected: 0,
      revision: null,
      steps: 0,
      files: [],
      recall: 0,
      precision: null,
    },
    build: {
      ran: false,
      status: null,
      stepsDone: 0,
      stepsBlocked: 0,
      stepsFailed: 0,
      files: [],
      outsidePlan: [],
      inPlan: null,
    },
    questions: { plan: 0, build: 0 },
    check: { ran: false, passed: false, exitCode: null, output: "", isolation: null },
    tests: null,
    usage: { plan: none, revise: none, build: none, total: none },
    cost: null,
    costByPhase: { plan: null, revise: null, build: null },
    seconds: { setup: 0, plan: 0, revise: 0, build: 0, check: 0, total: 0 },
    exitCodes: { plan: null, revise: null, build: null },
    log: "",
    failure: null,
    error: error instanceof Error ? error.message : String(error),
  };
}
