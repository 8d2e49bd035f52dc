import { appendFileSync, cpSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { git, latestThreadState, runBlueprint } from "./cli-driver.js";
import { checkRunner, runHiddenCheck, type CheckResult } from "./hidden-check.js";
import { emptyUsage, startMeteringProxy, type PhaseUsage } from "./metering-proxy.js";
import { addUsage, costOf, fileOverlap, type Prices } from "./scoring.js";
import type { EvalTask } from "./task-suite.js";

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
}

export interface TaskRun {
  task: string;
  run: number;
  plan: {
    valid: boolean;
    revision: number | null;
    steps: number;
    files: string[];
    recall: number | null;
    precision: number | null;
  };
  /** Steps finished; steps the agent reported blocked; steps that failed (limit hit, model or push error). */
  build: { ran: boolean; status: string | null; stepsDone: number; stepsBlocked: number; stepsFailed: number };
  /** Questions the agent asked (ask_user); each got the scripted "no one to ask" answer. */
  questions: { plan: number; build: number };
  check: { ran: boolean; passed: boolean; exitCode: number | null; output: string; isolation: "bwrap" | "plain" | null };
  usage: { plan: PhaseUsage; revise: PhaseUsage; build: PhaseUsage; total: PhaseUsage };
  cost: number | null;
  seconds: { plan: number; revise: number; build: number; check: number; total: number };
  exitCodes: { plan: number | null; revise: number | null; build: number | null };
  log: string;
  /** Set when the harness itself could not complete the run (not a model or build failure). */
  error: string | null;
}

const MAX_ANSWERS = 2;
export const NO_ONE_TO_ASK = "No one can answer questions during this evaluation. Make the most reasonable assumption, say which in your summary, and continue.";

/** One task, once: a fresh repository from the snapshot, `blueprint plan` (then `revise`), `blueprint build`, the hidden check. */
export async function runTask(task: EvalTask, run: number, settings: RunSettings): Promise<TaskRun> {
  const started = performance.now();
  // 1. A fresh git repository holding the earlier version, committed on `main`.
  const scratch = mkdtempSync(path.join(os.tmpdir(), `blueprint-eval-${task.id}-`));
  const checkout = path.join(scratch, "repo");
  cpSync(task.repoDir, checkout, { recursive: true });
  await git(checkout, ["init", "-q", "-b", "main"]);
  await git(checkout, ["add", "-A"]);
  await git(checkout, ["commit", "-q", "-m", `${task.meta.package} ${task.meta.from}`]);

  // 2. The CLI as a user runs it, with the model behind a proxy that counts tokens.
  const proxy = await startMeteringProxy(settings.baseUrl);
  mkdirSync(settings.logDir, { recursive: true });
  const log = path.join(settings.logDir, `${task.id}-run${run}.log`);
  appendFileSync(log, `# ${task.id} run ${run}: model endpoint ${settings.baseUrl}, reached through the eval's metering proxy ${proxy.url}\n\n`);
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH ?? "",
    HOME: path.join(scratch, "home"),
    BLUEPRINT_WORKDIR: path.join(scratch, "work"),
    ...settings.env,
    OPENAI_BASE_URL: proxy.url,
    OPENAI_API_KEY: settings.apiKey ?? "not-set",
    ...(settings.model ? { BLUEPRINT_MODEL: settings.model } : {}),
  };
  const cli = (phase: string, args: string[]) => {
    proxy.setPhase(phase);
    return runBlueprint(args, { cwd: checkout, env, logFile: log });
  };
  const seconds = { plan: 0, revise: 0, build: 0, check: 0, total: 0 };
  const questions = { plan: 0, build: 0 };
  // Nobody is at the terminal: a question gets one scripted answer, at most MAX_ANSWERS times per phase.
  const answerQuestions = async (phase: "plan" | "revise" | "build"): Promise<number> => {
    let asked = 0;
    while (asked < MAX_ANSWERS && (await latestThreadState(checkout))?.status === "awaiting_answer") {
      asked += 1;
      const answer = await cli(phase, ["answer", NO_ONE_TO_ASK]);
      seconds[phase] += answer.seconds;
    }
    return asked;
  };
  const exitCodes: TaskRun["exitCodes"] = { plan: null, revise: null, build: null };
  let check: CheckResult | null = null;
  let buildRan = false;
  try {
    const plan = await cli("plan", ["plan", task.issue]);
    seconds.plan = plan.seconds;
    exitCodes.plan = plan.exitCode;
    questions.plan = await answerQuestions("plan");
    if (settings.feedback && (await latestThreadState(checkout))?.plan) {
      const revise = await cli("revise", ["revise", settings.feedback]);
      seconds.revise = revise.seconds;
      exitCodes.revise = revise.exitCode;
      questions.plan += await answerQuestions("revise");
    }
    // 3. Build only a plan that is ready for approval.
    const planned = await latestThreadState(checkout);
    if (planned?.plan && planned.status === "pending") {
      buildRan = true;
      const build = await cli("build", ["build"]);
      seconds.build = build.seconds;
      exitCodes.build = build.exitCode;
      questions.build = await answerQuestions("build");
    }
    // 4. The hidden check on what the build committed (whatever it got to), in a clean clone of its branch.
    const built = await latestThreadState(checkout);
    if (buildRan && built?.branch && (await branchExists(checkout, built.branch))) {
      const tree = path.join(scratch, "checked");
      await git(scratch, ["clone", "-q", "--branch", built.branch, checkout, tree]);
      check = await runHiddenCheck(task, tree, checkRunner(settings.env.BLUEPRINT_SANDBOX !== "none"));
      seconds.check = check.seconds;
    }
    return score(task, run, { planned, built, buildRan, check, questions, seconds, exitCodes, log, started, proxyUsage: (phase) => proxy.usage(phase) }, settings.prices);
  } finally {
    await proxy.close();
    if (settings.keep) appendFileSync(log, `scratch repository kept: ${checkout}\n`);
    else rmSync(scratch, { recursive: true, force: true });
  }
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
  questions: TaskRun["questions"];
  seconds: TaskRun["seconds"];
  exitCodes: TaskRun["exitCodes"];
  log: string;
  started: number;
  proxyUsage(phase: string): PhaseUsage;
}

function score(task: EvalTask, run: number, facts: RunFacts, prices: Prices | null): TaskRun {
  const plan = facts.planned?.plan ?? null;
  const valid = plan !== null && facts.planned?.status === "pending";
  const files = plan ? [...new Set(plan.steps.flatMap((step) => step.files))] : [];
  const overlap = fileOverlap(valid ? files : [], task.meta.changedFiles);
  const steps = Object.values(facts.built?.steps ?? {});
  const usage = { plan: facts.proxyUsage("plan"), revise: facts.proxyUsage("revise"), build: facts.proxyUsage("build"), total: emptyUsage() };
  usage.total = addUsage(usage.plan, usage.revise, usage.build);
  return {
    task: task.id,
    run,
    plan: { valid, revision: facts.planned?.revision ?? null, steps: plan?.steps.length ?? 0, files, recall: overlap.recall, precision: overlap.precision },
    build: {
      ran: facts.buildRan,
      status: facts.buildRan ? (facts.built?.status ?? null) : null,
      stepsDone: facts.buildRan ? steps.filter((step) => step.status === "done").length : 0,
      stepsBlocked: facts.buildRan ? steps.filter((step) => step.status === "failed" && isBlocked(step.reason)).length : 0,
      stepsFailed: facts.buildRan ? steps.filter((step) => step.status === "failed" && !isBlocked(step.reason)).length : 0,
    },
    questions: facts.questions,
    check: {
      ran: facts.check !== null,
      passed: facts.check?.passed ?? false,
      exitCode: facts.check?.exitCode ?? null,
      output: facts.check?.output ?? "",
      isolation: facts.check?.isolation ?? null,
    },
    usage,
    cost: costOf(usage.total, prices),
    seconds: { ...facts.seconds, total: (performance.now() - facts.started) / 1000 },
    exitCodes: facts.exitCodes,
    log: facts.log,
    error: null,
  };
}

/** A run the harness could not complete (e.g. git or the proxy failed): it counts as a failure, with the reason. */
export function harnessFailure(task: EvalTask, run: number, error: unknown): TaskRun {
  const none = emptyUsage();
  return {
    task: task.id,
    run,
    plan: { valid: false, revision: null, steps: 0, files: [], recall: 0, precision: null },
    build: { ran: false, status: null, stepsDone: 0, stepsBlocked: 0, stepsFailed: 0 },
    questions: { plan: 0, build: 0 },
    check: { ran: false, passed: false, exitCode: null, output: "", isolation: null },
    usage: { plan: none, revise: none, build: none, total: none },
    cost: null,
    seconds: { plan: 0, revise: 0, build: 0, check: 0, total: 0 },
    exitCodes: { plan: null, revise: null, build: null },
    log: "",
    error: error instanceof Error ? error.message : String(error),
  };
}
