import type { RepoConfig } from "../../config/repo-config.js";
import type { JobNetwork } from "../../workspace/egress-proxy.js";
import type { Workspace } from "../../workspace/workspace.js";
import { detectSetups, type DetectedSetup } from "../../workspace/setup-detect.js";
import type { BuildLedger } from "./ledger.js";
import { openSetupNetwork } from "./network.js";
import type { BuildRun } from "./request.js";
import { VERIFY_TIMEOUT_MS } from "./step.js";

/**
 * The build's setup, run once before its first step: the repository's `setup:`, or else the frozen
 * install of each package manager its lock files name (setup-detect.ts). It runs in the sandbox like
 * every agent command, with the package registries for the setup alone (workflow/build/network.ts); the steps
 * keep the repository's `network:`. What it did, or why it failed, goes to each step's first message
 * (`dependenciesParagraph`) and to the build report.
 */

/** One setup command as it ran. */
export interface SetupCommandRun {
  command: string;
  /** From `.github/blueprint.yml`, or detected from a lock file. */
  detected: DetectedSetup | null;
  exitCode: number | null;
  timedOut: boolean;
  /** The last lines of its output, redacted. */
  tail: string;
}

export interface BuildSetup {
  runs: SetupCommandRun[];
  /** What was detected but needs no install (e.g. vendored Go modules), or was not run, and why. */
  notRun: Array<{ detected: DetectedSetup; why: string }>;
  /** The repository's test command, and where it was found. */
  test: { command: string; why: string } | null;
  /** What the steps' commands may reach, in words. */
  stepNetwork: string;
}

const TAIL_LINES = 25;

/** Runs the setup in the build's worktree; never throws for a failed install (the steps are built anyway, and told). */
export async function runBuildSetup(
  run: BuildRun,
  ledger: BuildLedger,
  tree: Workspace,
  buildNetwork: JobNetwork,
): Promise<BuildSetup> {
  const { config } = run;
  // Detected either way, for the test command; installed only when the repository configures no setup of its own.
  const detected = detectSetups(tree.dir);
  const installs = config.setup ? [] : detected;
  const commands = config.setup
    ? [{ command: config.setup, detected: null }]
    : installs.flatMap((found) => (found.command ? [{ command: found.command, detected: found }] : []));
  const setup: BuildSetup = {
    runs: [],
    notRun: installs
      .filter((found) => !found.command)
      .map((found) => ({ detected: found, why: `nothing to install: ${found.where}` })),
    test: config.test
      ? { command: config.test, why: "`test:` in .github/blueprint.yml; Blueprint runs it after the last step" }
      : (detected.find((found) => found.test)?.test ?? null),
    stepNetwork: describeNetwork(config),
  };
  if (commands.length === 0) return setup;
  const { network, own } = await openSetupNetwork(run.deps, config, buildNetwork);
  try {
    // Without any registry (BLUEPRINT_NETWORK_ALLOW=none), a detected install could only fail: it is not run, and the
    // steps are told why.
    if (!config.setup && network.policy.allow.length === 0) return notRunWithoutRegistry(run, setup, commands);
    for (const { command, detected: found } of commands) {
      if (run.job.signal.aborted) break;
      setup.runs.push(await runSetupCommand(run, ledger, tree, network, command, found));
    }
    if (own)
      run.notes.push(...network.refusals().map(({ host, count }) => `network: blocked ${host} ×${count} (setup)`));
  } finally {
    if (own) await network.close();
  }
  await tree.ignoreUntracked();
  run.notes.push(...setupReportNotes(setup));
  return setup;
}

function notRunWithoutRegistry(
  run: BuildRun,
  setup: BuildSetup,
  commands: Array<{ command: string; detected: DetectedSetup | null }>,
): BuildSetup {
  for (const { command, detected } of commands) {
    if (!detected) continue;
    setup.notRun.push({
      detected,
      why: "not installed: this App allows no package registry (its BLUEPRINT_NETWORK_ALLOW)",
    });
    run.notes.push(
      `⚠️ Dependencies not installed: \`${command}\` (${detected.manager}, detected from \`${detected.lockFile}\`) needs a package registry, and this App allows none (its BLUEPRINT_NETWORK_ALLOW).`,
    );
  }
  return setup;
}

async function runSetupCommand(
  run: BuildRun,
  ledger: BuildLedger,
  tree: Workspace,
  network: JobNetwork,
  command: string,
  detected: DetectedSetup | null,
): Promise<SetupCommandRun> {
  const { deps, job } = run;
  // Like an agent run, it never outlasts the wall-time limit.
  const result = await deps.runner.run(command, {
    cwd: tree.dir,
    network,
    signal: job.signal,
    timeoutMs: Math.min(VERIFY_TIMEOUT_MS, ledger.maxWallTimeMs),
  });
  ledger.audit.push({ action: "command", target: command, exitCode: result.exitCode, detail: "setup" });
  const tail = deps.redact(result.output).trimEnd().split("\n").slice(-TAIL_LINES).join("\n");
  return { command, detected, exitCode: result.exitCode, timedOut: result.timedOut, tail };
}

function describeNetwork(config: RepoConfig): string {
  if (config.network === "none")
    return "no network at all (`network: none`): use what is installed; installing more will fail";
  if (config.network === "registries") return "the package registries only (`network: registries`)";
  return "only the hosts `network:` in .github/blueprint.yml allows";
}

function failed(run: SetupCommandRun): boolean {
  return run.exitCode !== 0;
}

function howItEnded(run: SetupCommandRun): string {
  return run.timedOut ? "timed out" : run.exitCode === null ? "was killed" : `exited ${run.exitCode}`;
}

function origin(run: SetupCommandRun): string {
  return run.detected
    ? `${run.detected.manager}, detected from \`${run.detected.lockFile}\``
    : "`setup:` in .github/blueprint.yml";
}

/** The report's lines: each install that ran, and each that failed, by name. */
function setupReportNotes(setup: BuildSetup): string[] {
  return setup.runs.map((run) =>
    failed(run)
      ? `⚠️ **Setup failed:** \`${run.command}\` (${origin(run)}) ${howItEnded(run)}; the steps were built without what it installs.`
      : run.detected
        ? `📦 Dependencies installed by \`${run.command}\` (${origin(run)}) before the first step.`
        : `📦 Setup \`${run.command}\` (${origin(run)}) ran before the first step.`,
  );
}

/** "# Dependencies and tests": what each step's first message says about the build's setup. */
export function dependenciesParagraph(setup: BuildSetup): string {
  const lines = ["# Dependencies and tests"];
  if (setup.runs.length === 0 && setup.notRun.length === 0)
    lines.push(
      "No dependencies were installed: the repository has no lock file at its root and no `setup:` in .github/blueprint.yml.",
    );
  for (const run of setup.runs) {
    if (failed(run)) {
      lines.push(
        `NOT installed: the setup \`${run.command}\` (${origin(run)}) ${howItEnded(run)} before this step. Commands that need what it installs (tests, builds, linters) will fail for that reason, not because of your change. The end of its output:\n\`\`\`text\n${run.tail}\n\`\`\``,
      );
    } else {
      lines.push(
        run.detected
          ? `Installed before this step: \`${run.command}\` (${origin(run)}) succeeded; they are in ${run.detected.where}.`
          : `Ran before this step: the setup \`${run.command}\` (${origin(run)}) succeeded.`,
      );
    }
  }
  for (const { detected, why } of setup.notRun) lines.push(`${detected.manager} (\`${detected.lockFile}\`): ${why}.`);
  lines.push(`Your commands have ${setup.stepNetwork}.`);
  lines.push(
    setup.test
      ? `The repository's tests: \`${setup.test.command}\` (${setup.test.why}).`
      : "The repository names no test command.",
  );
  return lines.join("\n");
}
