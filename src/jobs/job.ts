import { z } from "zod";

/**
 * A job is plain data: what a worker needs to handle one webhook, in whatever process or machine
 * picks it up. Live objects (Octokit, ports, closures) never cross; a worker rebuilds them from this.
 */
const repository = z.object({
  owner: z.string().min(1),
  name: z.string().min(1),
  cloneUrl: z.string().min(1),
  defaultBranch: z.string().min(1),
  htmlUrl: z.string().min(1),
});

const common = {
  deliveryId: z.string().min(1),
  installationId: z.number().int().positive(),
  repository,
  /** The issue or pull request. */
  number: z.number().int().positive(),
  actor: z.string().min(1),
  /** When intake accepted the webhook (ms since the epoch): queue wait is measured from here. */
  receivedAt: z.number(),
};

const onComment = { ...common, commentId: z.number().int() };

export const jobSchema = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("plan"), ...onComment, instructions: z.string() }),
  z.object({ kind: z.literal("revise"), ...onComment, feedback: z.string() }),
  z.object({
    kind: z.literal("build"),
    ...onComment,
    revision: z.number().int().nullable(),
    steps: z.array(z.string()),
    force: z.boolean(),
    fresh: z.boolean(),
    /** Lines after `/build`: notes for the build. */
    notes: z.string(),
    /**
     * When the `/build` comment was made (GitHub's time): the approval covers what stood then, even if the comment is
     * deleted later.
     */
    commandCreatedAt: z.string().optional(),
  }),
  /** A plain comment: may answer a question or give feedback on a pending plan. */
  z.object({ kind: z.literal("respond"), ...onComment, body: z.string() }),
  z.object({ kind: z.literal("cancel"), ...onComment }),
  z.object({ kind: z.literal("help"), ...onComment }),
  z.object({ kind: z.literal("status"), ...onComment }),
  /** A mistyped or malformed command: answered (to people who may command) with `text`. */
  z.object({ kind: z.literal("reply"), ...onComment, text: z.string(), silentIfRefused: z.boolean() }),
  /** `submittedAt`: the review approves the revision standing then; its body is a note for the build. */
  z.object({
    kind: z.literal("review-approval"),
    ...common,
    reviewId: z.number().int(),
    commitId: z.string(),
    submittedAt: z.string(),
    body: z.string(),
  }),
  z.object({ kind: z.literal("review-changes"), ...common, reviewId: z.number().int(), body: z.string() }),
  /**
   * A review (`changes_requested` or `commented`) or `/fix` on a pull request whose plan is built: fix-up steps on its
   * branch. `pullRequest` is where it was given; `number` is the thread whose plan it follows (triage finds it: the
   * issue a Blueprint pull request was built for, or the pull request itself).
   */
  z.object({
    kind: z.literal("follow-up"),
    ...common,
    pullRequest: z.number().int().positive(),
    /** The `/fix` comment (null for a review). */
    commentId: z.number().int().nullable(),
    reviewId: z.number().int().nullable(),
    reviewState: z.enum(["changes_requested", "commented"]).nullable(),
    /** The review's body, or `/fix`'s notes. */
    text: z.string(),
  }),
  z.object({ kind: z.literal("stale"), ...common, headSha: z.string() }),
  /**
   * A check suite completed with `failure` on a pull request's head: `number` is the thread whose plan may have built
   * it (the issue of a `…issue-<n>` branch, else the pull request); `app` made the suite (Blueprint's own count not).
   */
  z.object({
    kind: z.literal("check-failure"),
    ...common,
    pullRequest: z.number().int().positive(),
    headSha: z.string().min(1),
    suiteId: z.number().int(),
    app: z.object({ id: z.number().int(), slug: z.string() }),
  }),
  /** Blueprint's pull request was merged or closed; `number` is the issue its plan lives on. */
  z.object({
    kind: z.literal("pull-closed"),
    ...common,
    pullRequest: z.number().int().positive(),
    merged: z.boolean(),
    headRef: z.string().min(1),
    headSha: z.string().min(1),
  }),
  /**
   * A button on a "Blueprint plan" check run: `/build` or `/revise` by whoever clicked, bound to the
   * check's plan revision and head commit; `app` made the check (only Blueprint's own count).
   */
  z.object({
    kind: z.literal("check-action"),
    ...common,
    action: z.enum(["build", "revise"]),
    revision: z.number().int().min(1),
    headSha: z.string(),
    checkRunId: z.number().int(),
    /** The hash of the plan the check's summary shows (its external id's; absent on checks made before it was). */
    planHash: z.string().optional(),
    app: z.object({ id: z.number().int(), slug: z.string() }),
    clickedAt: z.string(),
  }),
]);

export type Job = z.output<typeof jobSchema>;

/**
 * The App uninstalled (`repositories` null: every repository of the installation) or repositories
 * removed from it. Not a job: no thread, and no token (the installation is gone). Jobs of those
 * repositories received before it are dropped, and their files removed from the work directory.
 */
export const removalSchema = z.object({
  deliveryId: z.string().min(1),
  installationId: z.number().int().positive(),
  repositories: z.array(z.object({ owner: z.string().min(1), name: z.string().min(1) })).nullable(),
  receivedAt: z.number(),
});
export type Removal = z.output<typeof removalSchema>;

/** What a job stopped by a removal says (its thread will rarely hear it: the App has no access any more). */
export const REMOVED_REASON =
  "Blueprint no longer has access to this repository (the App was uninstalled, or the repository removed from it)";

/**
 * Whether a removal covers a job: same installation, one of its repositories (names are case-insensitive), received
 * before it.
 */
export function removalCovers(
  removal: Removal,
  job: Pick<Job, "installationId" | "receivedAt"> & { repository: Pick<Job["repository"], "owner" | "name"> },
): boolean {
  if (job.installationId !== removal.installationId || job.receivedAt > removal.receivedAt) return false;
  const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();
  return (
    removal.repositories === null ||
    removal.repositories.some(
      (repository) => same(repository.owner, job.repository.owner) && same(repository.name, job.repository.name),
    )
  );
}
export type JobKind = Job["kind"];

/** Kinds that run as work in the thread's lane (one at a time per thread, capped per process). */
export const LANE_KINDS: ReadonlySet<JobKind> = new Set([
  "plan",
  "revise",
  "build",
  "respond",
  "review-approval",
  "review-changes",
  "follow-up",
  "check-failure",
  "stale",
  "pull-closed",
  "check-action",
]);

/** The kinds whose actor's permission decides whether they run at all (docs/workflow.md, "Who may command"). */
export const GATED_KINDS: ReadonlySet<JobKind> = new Set([
  "plan",
  "revise",
  "build",
  "cancel",
  "reply",
  "review-approval",
  "review-changes",
  "follow-up",
  "check-action",
]);

/** One job at a time per issue or pull request, across every worker. */
export function threadOf(job: Pick<Job, "repository" | "number">): string {
  return `${job.repository.owner}/${job.repository.name}#${job.number}`;
}

/** The words a thread sees for the job ("Queued: … (planning for @x)", "Stopping planning for @x"). */
export function jobLabel(job: Job): string {
  switch (job.kind) {
    case "plan":
      return `planning for @${job.actor}`;
    case "revise":
    case "review-changes":
      return `revising for @${job.actor}`;
    case "build":
    case "review-approval":
      return `building for @${job.actor}`;
    case "respond":
      return `reading a comment by @${job.actor}`;
    case "follow-up":
      return `following up the review of @${job.actor}`;
    case "stale":
      return "checking the plan against new commits";
    case "check-failure":
      return `following up failing checks on #${job.pullRequest}`;
    case "check-action":
      return `${job.action === "build" ? "building" : "revising"} for @${job.actor}`;
    case "cancel":
      return "withdrawing a question";
    case "pull-closed":
      return `following up on pull request #${job.pullRequest}`;
    default:
      return `answering @${job.actor}`;
  }
}

/**
 * Whether a job builds (pushes, runs the plan's steps) on its own token: `/build`, an approving review,
 * and the "Build plan vN" button. A "Revise" click only comments, like `/revise`.
 */
export function buildsOnItsToken(job: { kind: JobKind; action?: string }): boolean {
  return (
    job.kind === "build" ||
    job.kind === "review-approval" ||
    job.kind === "follow-up" ||
    job.kind === "check-failure" ||
    (job.kind === "check-action" && job.action === "build")
  );
}

/**
 * The installation permissions a job's token is narrowed to. A build gets what the installation
 * has (workflows included, when granted) but only on its own repository; everything else cannot push.
 */
export function tokenPermissionsFor(job: { kind: JobKind; action?: string }): Record<string, "read" | "write"> | null {
  if (buildsOnItsToken(job)) return null;
  // Deleting a merged branch writes to the repository's refs.
  if (job.kind === "pull-closed")
    return { contents: "write", issues: "write", pull_requests: "read", metadata: "read" };
  // `checks`: a new plan revision gets its check run (a token minted without it, where the installation lacks it, skips
  // them).
  return { contents: "read", issues: "write", pull_requests: "write", metadata: "read", checks: "write" };
}
