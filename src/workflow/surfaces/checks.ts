import type { RepoConfig } from "../../config/repo-config.js";
import { checkRunExternalId, PLAN_CHECK_NAME, planCheckButtons } from "../../shared/check-run.js";
import { oneLine } from "../../plan/render.js";
import { planHash } from "../../plan/hash.js";
import type { Plan } from "../../plan/schema.js";
import type { Logger, WorkflowDeps } from "../deps.js";
import { plainError } from "../plain-error.js";
import type { CheckRunOutput, CheckRunPort, ThreadPort } from "../ports.js";
import { redactStrings } from "../safe-port.js";
import { planMadeOn, type ThreadState } from "../state.js";

/** Ports whose token may not write checks (GitHub answered 403): said once, then left alone. */
const refused = new WeakSet<CheckRunPort>();

/**
 * Writes one check run (found by name and external id on its commit, else created), where the port
 * has checks. Never fails the job it serves: checks follow the thread, the thread stays the record.
 * A token without `checks: write` (an Action's, an installation that has not accepted the
 * permission) is logged once and skipped from then on.
 */
export async function writeCheckRun(
  port: ThreadPort,
  log: Logger,
  run: CheckRunOutput & { name: string; headSha: string; externalId: string },
  options: { createIfMissing: boolean } = { createIfMissing: true },
): Promise<number | null> {
  const checks = port.checks;
  if (!checks || refused.has(checks) || !run.headSha) return null;
  try {
    const id = await checks.find(run.headSha, run.name, run.externalId);
    if (id !== null) {
      await checks.update(id, run);
      return id;
    }
    return options.createIfMissing ? await checks.create(run) : null;
  } catch (error) {
    if ((error as { status?: number }).status === 403) {
      refused.add(checks);
      log.warn(
        { err: error },
        "this token may not write check runs (GitHub answered 403): Blueprint's checks are skipped; grant `checks: write` to have them",
      );
      return null;
    }
    log.warn({ err: error, check: run.name }, `could not write the "${run.name}" check run: ${plainError(error)}`);
    return null;
  }
}

/** Who may approve a plan here, in one sentence (the App's minimum permission and the repository's configuration). */
export function whoMayApprove(
  deps: Pick<WorkflowDeps, "minPermission">,
  config: RepoConfig,
  requestedBy: string,
): string {
  const level = config.min_permission ?? deps.minPermission;
  const who =
    config.approvers === "codeowners"
      ? `code owners (per the default branch's CODEOWNERS) of the files each step changes, with ${level} access or higher`
      : `people with ${level} access or higher`;
  return `${who}${config.require_other_approver ? `, other than @${requestedBy}, who asked for the plan` : ""}.`;
}

/**
 * A new plan revision on a pull request: a "Blueprint plan" check run on the head commit it was made
 * for, neutral while it waits, with the Build and Revise buttons; the previous revision's check is
 * cancelled, its buttons gone.
 */
export async function postPlanCheck(
  deps: WorkflowDeps,
  port: ThreadPort,
  input: { plan: Plan; state: ThreadState; config: RepoConfig; estimate: string; previous: ThreadState | null },
): Promise<void> {
  const { plan, state, previous } = input;
  if (!state.head) return;
  const revision = state.revision;
  const steps = plan.steps
    .map(
      (step) =>
        `- **${step.id}** ${oneLine(step.title)}${step.deps.length > 0 ? ` (after ${step.deps.join(", ")})` : ""}`,
    )
    .join("\n");
  const summary = [
    `**${oneLine(plan.title)}**, made on \`${state.head.sha.slice(0, 7)}\`.`,
    `#### Steps\n${steps}`,
    input.estimate,
    `**Who may approve:** ${whoMayApprove(deps, input.config, state.requestedBy)}`,
    port.checks?.buttons
      ? `**Build plan v${revision}** approves and builds it, as \`/build\` would; **Revise** asks for changes, as \`/revise\` would. The plan comment on the pull request has the details.`
      : `Comment \`/build\` on the pull request to approve and build it, or \`/revise\` with what should change. The plan comment there has the details.`,
  ].join("\n\n");
  await writeCheckRun(port, deps.log, {
    name: PLAN_CHECK_NAME,
    headSha: state.head.sha,
    // The hash of the plan this summary shows, as the plan comment's state keeps it (redacted as every write is): a
    // click approves that plan, never one edited since.
    externalId: checkRunExternalId({
      kind: "plan",
      number: port.number,
      revision,
      planHash: planHash(redactStrings(plan, deps.redact)),
    }),
    status: "completed",
    conclusion: "neutral",
    title: `Plan v${revision} waits for approval`,
    summary,
    ...(port.checks?.buttons ? { actions: planCheckButtons(revision) } : {}),
  });
  // One that waited is cancelled, a build that failed or was not verified included; a built one keeps its success.
  const previousHead = previous && planMadeOn(previous);
  if (previous && previousHead && previous.revision !== revision)
    await settlePlanCheck(
      deps,
      port,
      { revision: previous.revision, headSha: previousHead },
      { conclusion: "cancelled", title: `Superseded by plan v${revision}` },
    );
}

/**
 * A revision's plan check once its plan moved on: built (success), or superseded or stale (cancelled, unless it is
 * built already: a success stays); its buttons go. `headSha`: the commit the plan was made for (a build moves the
 * state's head on).
 */
export async function settlePlanCheck(
  deps: Pick<WorkflowDeps, "log">,
  port: ThreadPort,
  plan: { revision: number; headSha: string },
  verdict: { conclusion: "success" | "cancelled"; title: string },
): Promise<void> {
  const externalId = checkRunExternalId({ kind: "plan", number: port.number, revision: plan.revision });
  if (verdict.conclusion === "cancelled" && (await concluded(port, plan.headSha, externalId)) === "success") return;
  await writeCheckRun(
    port,
    deps.log,
    {
      name: PLAN_CHECK_NAME,
      headSha: plan.headSha,
      externalId,
      status: "completed",
      conclusion: verdict.conclusion,
      title: verdict.title,
      summary: `Plan v${plan.revision}: ${verdict.title.toLowerCase()}. The plan comment on the pull request has the details.`,
      actions: [],
    },
    { createIfMissing: false },
  );
}

/** The conclusion of this app's plan check `externalId` on `headSha`, or null (none, running, or unreadable). */
async function concluded(port: ThreadPort, headSha: string, externalId: string): Promise<string | null> {
  const checks = port.checks;
  if (!checks || refused.has(checks)) return null;
  try {
    const id = await checks.find(headSha, PLAN_CHECK_NAME, externalId);
    return id === null ? null : ((await checks.get(id))?.conclusion ?? null);
  } catch {
    // Unreadable: settled as asked (writeCheckRun says what fails then).
    return null;
  }
}
