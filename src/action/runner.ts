import { createRedactor } from "../agent/redact.js";
import type { PortOctokit } from "../github/octokit-port.js";
import { createWorkflowDeps } from "../app/create-deps.js";
import { readActionEvent } from "./event.js";
import { readInput, readInputs } from "./inputs.js";
import { actionLogger, type ActionIo } from "./io.js";
import { runActionJob } from "./main.js";
import { createActionOctokit, type ActionOctokitOptions } from "./octokit.js";
import { refusedReads } from "./permissions.js";
import { outputsOf, renderJobSummary } from "./summary.js";

export interface ActionRunnerDeps {
  /** The step's environment: INPUT_*, GITHUB_EVENT_NAME, GITHUB_EVENT_PATH, GITHUB_API_URL, … */
  env: NodeJS.ProcessEnv;
  io: ActionIo;
  fetch?: typeof globalThis.fetch | undefined;
  createOctokit?: (options: ActionOctokitOptions) => PortOctokit;
}

export interface ActionResult {
  status: string;
  failed: boolean;
}

/** The Action from environment to verdict; every dependency that talks to the outside is injected. */
export async function runAction(deps: ActionRunnerDeps): Promise<ActionResult> {
  const { env, io } = deps;
  // 1. Mask the secrets before anything could print them.
  const secrets = [
    readInput(env, "github-token"),
    readInput(env, "openai-api-key"),
    env.OPENAI_API_KEY ?? "",
    readInput(env, "state-secret"),
    env.BLUEPRINT_STATE_SECRET ?? "",
  ].filter(Boolean);
  secrets.forEach((secret) => io.setSecret(secret));
  const redact = createRedactor(secrets);
  const fail = (message: string): ActionResult => {
    io.setOutput("status", "error");
    io.setFailed(redact(message));
    return { status: "error", failed: true };
  };

  try {
    // 2. Inputs and the event that started the workflow.
    const inputs = readInputs(env);
    const deliveryId = `actions-${env.GITHUB_RUN_ID ?? "local"}-${env.GITHUB_RUN_ATTEMPT ?? "1"}`;
    const event = await readActionEvent(
      env.GITHUB_EVENT_NAME,
      env.GITHUB_EVENT_PATH,
      deliveryId,
      env.GITHUB_WORKFLOW_REF,
    );
    if (event.kind === "ignored") {
      io.info(`Nothing to do: ${event.reason}`);
      io.setOutput("status", "skipped");
      return { status: "skipped", failed: false };
    }

    // 3. The engine and GitHub (api.github.com, or GHES through GITHUB_API_URL).
    const log = actionLogger(io);
    const workflowDeps = createWorkflowDeps(inputs.engine, log, [inputs.githubToken]);
    // Reads a checks follow-up was refused: the permissions the workflow should grant.
    const refused = refusedReads();
    const octokit = (deps.createOctokit ?? createActionOctokit)({
      token: inputs.githubToken,
      baseUrl: env.GITHUB_API_URL || "https://api.github.com",
      log,
      fetch: deps.fetch,
      // Off only where nothing is rate-limited, as for the App (BLUEPRINT_GITHUB_WRITE_GAP_MS).
      paced: env.BLUEPRINT_GITHUB_WRITE_GAP_MS !== "0",
      onError: refused.record,
    });

    // 4. The job, inline.
    const { outcome, jobErrors } = await runActionJob({
      deps: workflowDeps,
      octokit,
      event,
      botLogin: inputs.botLogin,
    });

    // 5. Outputs, summary, verdict.
    const outputs = outputsOf(outcome);
    for (const [name, value] of Object.entries(outputs)) io.setOutput(name, value);
    const problems = [
      ...(outcome.failed
        ? [`${outcome.error ?? "the run failed"} (${outcome.latest?.comment.url ?? "see the thread"})`]
        : []),
      ...jobErrors,
    ].map(redact);
    // Only a checks follow-up needs them: any other job's refused check reads are its check runs', skipped as before.
    const permissions = event.kind === "checks" ? refused.advice() : [];
    permissions.forEach((line) => io.warning(line));
    await io.writeSummary(redact(renderJobSummary(event, outcome, problems, permissions)));
    if (problems.length > 0) {
      io.setFailed(`Blueprint failed: ${problems.join("; ")}`);
      return { status: outputs.status, failed: true };
    }
    return { status: outputs.status, failed: false };
  } catch (error) {
    return fail(`Blueprint could not run: ${error instanceof Error ? error.message : String(error)}`);
  }
}
