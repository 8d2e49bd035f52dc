import { existsSync } from "node:fs";
import path from "node:path";
import { BUILD_CHECK_NAME, checkRunExternalId } from "../../shared/check-run.js";
import { oneLine } from "../../plan/render.js";
import type { Plan } from "../../plan/schema.js";
import { describeChecks } from "./outcome.js";
import { failedChecks, renderStepLines, type VerificationResult } from "./report.js";
import { annotationsFrom, MAX_ANNOTATIONS } from "../surfaces/index.js";
import { settlePlanCheck, writeCheckRun } from "../surfaces/index.js";
import type { Logger } from "../deps.js";
import type { CheckAnnotation, CheckConclusion, CheckRunOutput, ThreadPort } from "../ports.js";
import type { ThreadState } from "../state.js";

/**
 * The "Blueprint build" check run: on the build branch's head, in progress with the step list while
 * the build runs, completed with its outcome. The branch's head moves with each pushed step, so the
 * check moves with it (a new run on the new commit; the one left behind says where it went), and the
 * check a ruleset requires is the one on the pull request's head.
 */
export class BuildCheck {
  private sha: string | null;
  private readonly seen = new Set<string>();
  private verification: { total: number; failed: VerificationResult[]; annotations: CheckAnnotation[] } | null = null;
  private readonly externalId: string;

  constructor(
    private readonly port: ThreadPort,
    private readonly log: Logger,
    private readonly plan: Plan,
    private readonly state: ThreadState,
  ) {
    this.externalId = checkRunExternalId({ kind: "build", number: port.number, revision: state.revision });
    for (const progress of Object.values(state.steps)) if (progress.commit) this.seen.add(progress.commit);
    // A pull request's head is the branch the build pushes to; an issue's branch is at its last step pushed (a
    // resumed build), or shows itself with the first push.
    this.sha = state.head?.sha ?? [...this.seen].at(-1) ?? null;
  }

  /** The build starts: in progress on the branch's head, where there is one yet. */
  async start(): Promise<void> {
    if (this.sha) await this.write(this.sha, { status: "in_progress", title: "Building", summary: this.stepList() });
  }

  /** After each save of the plan comment: a step pushed since moves the check to its commit. */
  async follow(): Promise<void> {
    const pushed = Object.values(this.state.steps)
      .map((progress) => progress.commit)
      .filter((commit): commit is string => commit !== undefined && !this.seen.has(commit));
    const newest = pushed.at(-1);
    if (!newest) return;
    for (const commit of pushed) this.seen.add(commit);
    const left = this.sha;
    this.sha = newest;
    await this.write(newest, { status: "in_progress", title: "Building", summary: this.stepList() });
    if (left && left !== newest)
      await this.write(
        left,
        {
          status: "completed",
          conclusion: "neutral",
          title: `Continued on ${newest.slice(0, 7)}`,
          summary: `The build pushed \`${newest.slice(0, 7)}\`; its check run is there.`,
        },
        false,
      );
  }

  /** What verification found: the failed checks, and the repository's files and lines their output names. */
  verified(results: VerificationResult[], root: string): void {
    const failed = failedChecks(results);
    const annotations = failed
      .flatMap((result) =>
        annotationsFrom(result.output, oneLine(result.command).slice(0, 200), root, (file) =>
          existsSync(path.join(root, file)),
        ),
      )
      .slice(0, MAX_ANNOTATIONS);
    this.verification = { total: results.filter((result) => !result.notRun).length, failed, annotations };
  }

  /**
   * The build ended (`planHead`: the commit its plan was made for): the check completes with the
   * outcome, and a plan built in full has its plan check succeed. A build handed to another worker
   * stays in progress; that worker goes on with it.
   */
  async finish(planHead: string | null, handedOver: boolean): Promise<void> {
    await this.follow();
    if (handedOver || !this.sha) return;
    const outcome = this.outcome();
    await this.write(this.sha, {
      status: "completed",
      conclusion: outcome.conclusion,
      title: outcome.title,
      summary: `${outcome.summary}\n\n#### Steps\n${this.stepList()}`,
      annotations: this.verification?.annotations ?? [],
    });
    if (planHead && this.state.status === "built" && outcome.conclusion === "success") {
      await settlePlanCheck(
        { log: this.log },
        this.port,
        { revision: this.state.revision, headSha: planHead },
        { conclusion: "success", title: `Plan v${this.state.revision} is built` },
      );
    }
  }

  private outcome(): { conclusion: CheckConclusion; title: string; summary: string } {
    const { state } = this;
    const failed = this.verification?.failed ?? [];
    switch (state.status) {
      case "built":
      case "pending":
        if (failed.length > 0)
          return {
            conclusion: "failure",
            title: `Built, but verification failed: ${failed.length} of ${this.verification?.total ?? failed.length} checks`,
            summary: `Failed: ${describeChecks(failed)}.`,
          };
        if (this.verification)
          return {
            conclusion: "success",
            title: state.status === "built" ? "Built and verified" : "The steps asked for are built and verified",
            summary: "Every verification command passed.",
          };
        break;
      case "cancelled":
        return {
          conclusion: "cancelled",
          title: "Cancelled",
          summary: oneLine(state.error ?? "The build was cancelled."),
        };
      case "failed":
        return {
          conclusion: "failure",
          title: "The build failed",
          summary: oneLine(state.error ?? "The build stopped."),
        };
      case "awaiting_answer":
        return {
          conclusion: "neutral",
          title: "Waiting for an answer",
          summary: "The build asked a question on the thread; answering it resumes the build.",
        };
    }
    // Never left in progress: whatever else stopped the build, the thread says why.
    return {
      conclusion: "neutral",
      title: "Stopped",
      summary: "The build stopped; the issue or pull request it was asked on says why.",
    };
  }

  private stepList(): string {
    return renderStepLines(this.plan, this.state);
  }

  private async write(sha: string, output: CheckRunOutput, create = true): Promise<void> {
    await writeCheckRun(
      this.port,
      this.log,
      { name: BUILD_CHECK_NAME, headSha: sha, externalId: this.externalId, ...output },
      { createIfMissing: create },
    );
  }
}
