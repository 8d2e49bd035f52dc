import type { PermissionLevel } from "../github/permission.js";

export interface RepositoryInfo {
  owner: string;
  name: string;
  /** From the webhook payload; never hard-coded. */
  cloneUrl: string;
  defaultBranch: string;
  htmlUrl: string;
}

export interface ThreadComment {
  id: number;
  nodeId?: string | undefined;
  url: string;
  body: string;
  author: string;
  authorIsBot: boolean;
  /** Written by this Blueprint installation (only such comments' markers are trusted). */
  own: boolean;
  createdAt: string;
  updatedAt: string;
}

export interface PullRequestInfo {
  number: number;
  headRef: string;
  headSha: string;
  baseRef: string;
  /** Head branch lives in this repository (not a fork). */
  sameRepo: boolean;
  url: string;
}

export interface ThreadInfo {
  kind: "issue" | "pull_request";
  number: number;
  title: string;
  body: string;
  author: string;
  pullRequest?: PullRequestInfo | undefined;
}

export type Reaction = "eyes" | "+1" | "-1" | "confused" | "rocket";

export interface PullRequestDraft {
  head: string;
  base: string;
  title: string;
  body: string;
  /** Opened (or turned back into) a draft: verification failed, so it is not ready for review. */
  draft: boolean;
}

/**
 * What the use cases need from GitHub (or from a local stand-in in the CLI), for one issue or pull request.
 * Implemented as plain objects (github/octokit-port.ts, cli/local-port.ts); the wrappers spread a port and override
 * what they change, so a new method is added here and in the implementations only — and in safe-port.ts when it sends
 * text to GitHub, which must pass the redactor.
 */
export interface ThreadPort {
  readonly repo: RepositoryInfo;
  readonly number: number;
  info(): Promise<ThreadInfo>;
  comments(): Promise<ThreadComment[]>;
  postComment(body: string): Promise<{ id: number; url: string }>;
  updateComment(id: number, body: string): Promise<void>;
  /**
   * Resolves false when this account had already added the reaction (GitHub answers 200, not 201): the comment was
   * acknowledged before. True, or nothing where that cannot be told, otherwise.
   */
  reactToComment(commentId: number, reaction: Reaction): Promise<boolean | void>;
  permission(login: string): Promise<PermissionLevel>;
  /**
   * Whether `login` is an active member of the organisation's team (child teams included), for CODEOWNERS' `@org/team`.
   */
  teamMember(org: string, teamSlug: string, login: string): Promise<boolean>;
  /**
   * A GitHub account as anyone may see it (its public e-mail, if it shows one), for CODEOWNERS' e-mail owners; null
   * when there is no such account.
   */
  account(login: string): Promise<GitHubAccount | null>;
  /** Token for git over HTTPS, or null when git needs none (local remotes). */
  gitToken(): Promise<string | null>;
  commitUrl(sha: string): string;
  /** Opens a pull request, or updates the open one with the same head (its draft state included). */
  upsertPullRequest(draft: PullRequestDraft): Promise<{ number: number; url: string; created: boolean }>;
  /** Whether the installation may change files under .github/workflows/. */
  canWriteWorkflows(): Promise<boolean>;
  /** Inline comments of one pull-request review, with file and line. */
  reviewComments(reviewId: number): Promise<ReviewComment[]>;
  /** One comment of this thread, as GitHub has it now; null when it is gone or on another thread. */
  comment(id: number): Promise<ThreadComment | null>;
  /** One review of this pull request, as GitHub has it now; null when there is none with that id. */
  review(id: number): Promise<PullRequestReview | null>;
  /** Collapses an outdated comment (GitHub's "minimize as outdated"); best effort. */
  minimizeComment(comment: ThreadComment): Promise<void>;
  /** The names of the labels this issue or pull request carries. */
  threadLabels(): Promise<string[]>;
  /** The names of the repository's labels. */
  repositoryLabels(): Promise<string[]>;
  /** Creates a label in the repository; false when it has one by that name already. */
  createLabel(label: LabelSpec): Promise<boolean>;
  addThreadLabel(name: string): Promise<void>;
  /** Takes a label off this thread (nothing happens when it does not carry it). */
  removeThreadLabel(name: string): Promise<void>;
  /**
   * Whether GitHub deletes a pull request's head branch once it is merged (the repository's setting);
   * null when it cannot tell (GitHub leaves the field out for a token without `administration: read`).
   * Blueprint deletes a branch through git (Mirror.deleteBranch), at the commit it checked.
   */
  deletesMergedBranches(): Promise<boolean | null>;
  /** Check runs on the repository's commits; null where there are none (the CLI). Required, so no wrapper drops it. */
  readonly checks: CheckRunPort | null;
  /**
   * A pull request's review threads, read and answered (a follow-up); null where there are none (the CLI). Any pull
   * request of the repository: a build's pull request is another thread than the issue its plan lives on.
   */
  readonly reviews: ReviewPort | null;
}

/** One comment of a review thread, as GitHub has it now. */
export interface ReviewThreadComment {
  /** The REST id (GraphQL's `databaseId`): replies are made to it. */
  id: number;
  author: string;
  authorIsBot: boolean;
  body: string;
  url: string;
  /** The review it was submitted with; null for a reply made on its own. */
  reviewId: number | null;
}

/** A conversation on a line (or lines) of a pull request's diff. */
export interface ReviewThread {
  /** GraphQL node id: a thread is resolved by it. */
  id: string;
  path: string;
  /** The thread's last line in the pull request's head (null when GitHub cannot place it there any more). */
  line: number | null;
  /** A multi-line thread's first line; null for one line. */
  startLine: number | null;
  /** RIGHT: the new file's lines; LEFT: the old file's. */
  side: "LEFT" | "RIGHT";
  resolved: boolean;
  outdated: boolean;
  /** The diff around the thread's first comment, ending at its line. */
  diffHunk: string;
  comments: ReviewThreadComment[];
}

/** A pull request as a follow-up checks it: whose it is, where its head is. */
export interface PullRequestFacts extends PullRequestInfo {
  author: string;
  authorIsBot: boolean;
  open: boolean;
}

export interface ReviewPort {
  /** One pull request of the repository; null when there is none with that number. */
  pullRequest(number: number): Promise<PullRequestFacts | null>;
  /** One review of a pull request, as GitHub has it now; null when there is none. */
  review(pullRequest: number, reviewId: number): Promise<PullRequestReview | null>;
  /** Every review thread of the pull request (resolved and outdated ones too; the caller chooses). */
  threads(pullRequest: number): Promise<ReviewThread[]>;
  /** A reply in the thread of a review comment. */
  reply(pullRequest: number, commentId: number, body: string): Promise<{ id: number; url: string }>;
  /** Marks a thread resolved. */
  resolve(threadId: string): Promise<void>;
  /** A plain comment on the pull request's conversation. */
  comment(pullRequest: number, body: string): Promise<{ id: number; url: string }>;
}

export interface LabelSpec {
  name: string;
  /** Six hex digits, no `#`. */
  color: string;
  description: string;
}

export type CheckConclusion = "success" | "failure" | "neutral" | "cancelled";

/** A line of a file a check run points at (GitHub shows it in the diff). */
export interface CheckAnnotation {
  path: string;
  line: number;
  level: "failure" | "warning" | "notice";
  title?: string | undefined;
  message: string;
}

/** A check run as Blueprint writes it: in progress, or completed with a conclusion. */
export interface CheckRunOutput {
  status: "in_progress" | "completed";
  conclusion?: CheckConclusion | undefined;
  title: string;
  summary: string;
  text?: string | undefined;
  /** Sent 50 to a request, as GitHub allows; an update adds to those already there. */
  annotations?: CheckAnnotation[] | undefined;
  /** Buttons (`requested_action`); an empty list removes them. */
  actions?: Array<{ label: string; identifier: string; description: string }> | undefined;
}

/** A check run as GitHub has it now: what binds it to a thread, a plan revision and a commit. */
export interface CheckRunFacts {
  name: string;
  headSha: string;
  externalId: string | null;
  /** Its conclusion once completed (`success`, `cancelled`, …); null while it runs. */
  conclusion: string | null;
  /** Made by this app (its `app` as GitHub says, not as a webhook or a job says). */
  own: boolean;
}

export interface CheckRunPort {
  /**
   * This app's check run with that name and external id on the commit (the same kind, thread and revision, whatever
   * plan hash either carries: `sameCheckRun`), or null when there is none.
   */
  find(headSha: string, name: string, externalId: string): Promise<number | null>;
  /** One check run of this repository, by id, as GitHub has it now; null when there is none. */
  get(id: number): Promise<CheckRunFacts | null>;
  create(run: CheckRunOutput & { name: string; headSha: string; externalId: string }): Promise<number>;
  update(id: number, run: CheckRunOutput): Promise<void>;
  /**
   * The commit's check runs that failed (or timed out), with what they say: output, annotations and, for a GitHub
   * Actions job, the end of its log. Blueprint's own are marked `own`.
   */
  failures(headSha: string): Promise<FailingCheck[]>;
  /** Whether a check run's app (from a webhook's `check_run.app`) is this one. */
  isOwnApp(app: { id: number; slug: string }): boolean;
  /** Whether clicks on buttons reach Blueprint (the App's `check_run` webhook; not an Action's token). */
  readonly buttons: boolean;
}

/** A check run that failed, as its app wrote it: untrusted text, every word of it. */
export interface FailingCheck {
  id: number;
  name: string;
  /** Made by this app: Blueprint never takes its own checks for a failure to fix. */
  own: boolean;
  title: string;
  summary: string;
  annotations: Array<{ path: string; line: number; title: string | null; message: string }>;
  /** For a GitHub Actions job: the end of its log (size-capped); null for other checks, or when it cannot be read. */
  logTail: string | null;
}

export interface GitHubAccount {
  login: string;
  id: number;
  /** The public profile e-mail (a verified address the person chose to show), or null. */
  email: string | null;
}

export interface PullRequestReview {
  author: string;
  /** GitHub's word: `APPROVED`, `CHANGES_REQUESTED`, `COMMENTED`, … */
  state: string;
  submittedAt: string | null;
  commitId: string;
}

export interface ReviewComment {
  path: string;
  line: number | null;
  body: string;
  author: string;
}
