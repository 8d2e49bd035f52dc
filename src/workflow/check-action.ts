import { findThreadState } from "../github/plan-comment.js";
import { threadSeal } from "../github/state-marker.js";
import { buildThread } from "./build/index.js";
import type { JobContext, WorkflowDeps } from "./deps.js";

/** A click on a "Blueprint plan" check run's button, as the webhook gave it. */
export interface CheckClick {
  action: "build" | "revise";
  /** The plan revision and head commit the check was made for. */
  revision: number;
  headSha: string;
  /** The hash of the plan the check's summary shows (from its external id; absent on older checks). */
  planHash?: string | undefined;
  /** The app that made the check run. */
  app: { id: number; slug: string };
  clickedAt: string;
}

/**
 * A check run's button, handled as the command it stands for, by whoever clicked (their permission
 * was checked at triage, like a comment's): **Build plan vN** is `/build vN` bound to the check's
 * commit; **Revise** is `/revise` without words, so it asks the clicker for them.
 */
export async function handleCheckClick(deps: WorkflowDeps, job: JobContext, click: CheckClick): Promise<void> {
  const { port } = job;
  // 1. Only Blueprint's own checks: another app's check run with the same name is no command to us.
  if (!port.checks?.isOwnApp(click.app)) {
    deps.log.warn(
      { deliveryId: job.deliveryId, app: click.app },
      "ignored a click on a check run that another app made",
    );
    return;
  }
  // 2. Build: the same admission as `/build`, bound to the clicked revision and commit.
  if (click.action === "build") {
    const approval = {
      approver: job.actor,
      revision: click.revision,
      steps: [],
      force: false,
      permitted: true,
      minimumPermission: deps.minPermission,
      checkClick: { headSha: click.headSha, clickedAt: click.clickedAt, planHash: click.planHash },
    };
    return buildThread(deps, job, { approval, fresh: false });
  }
  // 3. Revise: a button carries no feedback, so the thread asks for it (on the revision clicked, if it still stands).
  const lookup = findThreadState(await port.comments(), threadSeal(deps.stateKey, port));
  const latest = lookup.kind === "found" ? lookup.plan?.state : undefined;
  if (!latest?.plan) {
    await port.postComment(
      `@${job.actor} clicked **Revise**, but there is no plan here to revise. Comment \`/plan\` first.`,
    );
    return;
  }
  if (latest.revision !== click.revision) {
    await port.postComment(
      `@${job.actor} clicked **Revise** on plan v${click.revision}'s check, but v${click.revision} was superseded by v${latest.revision}. Comment \`/revise\` and what should change to revise v${latest.revision}.`,
    );
    return;
  }
  if (latest.status === "building" || latest.status === "built") {
    await port.postComment(
      `@${job.actor} clicked **Revise**, but plan v${latest.revision} is ${latest.status === "built" ? "already built" : "being built"}. Comment \`/plan\` for new work.`,
    );
    return;
  }
  await port.postComment(
    `@${job.actor}, what should change in plan v${latest.revision}? Comment \`/revise\` followed by the changes you want (a review that requests changes works too), and Blueprint posts v${latest.revision + 1}.`,
  );
}
