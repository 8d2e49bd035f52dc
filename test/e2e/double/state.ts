/** What the double remembers about its one repository: issues, comments, reactions, pulls, who may do what. */

/** Repository roles as GitHub names them (`role_name` of the collaborator-permission endpoint). */
export type RepositoryRole = "admin" | "maintain" | "write" | "triage" | "read" | "none";

export interface Account {
  login: string;
  type: "User" | "Bot";
}

export interface IssueRecord {
  number: number;
  title: string;
  body: string;
  user: Account;
  state: "open" | "closed";
  isPullRequest: boolean;
  /** The names of the labels it carries, in the order they were added. */
  labels: string[];
  createdAt: string;
  updatedAt: string;
}

export interface LabelRecord {
  id: number;
  name: string;
  /** Six hex digits, no `#`. */
  color: string;
  description: string | null;
}

export interface CommentRecord {
  id: number;
  nodeId: string;
  issueNumber: number;
  body: string;
  user: Account;
  /** Written through this installation (GitHub then fills `performed_via_github_app`). */
  viaApp: boolean;
  createdAt: string;
  updatedAt: string;
  /** Every body the comment had, first to last. */
  history: string[];
  /** The GraphQL `minimizeComment` classifier, once minimized. */
  minimized: string | null;
}

export interface ReactionRecord {
  id: number;
  commentId: number;
  content: string;
  user: Account;
}

export interface PullRecord {
  number: number;
  head: string;
  base: string;
  title: string;
  body: string;
  state: "open" | "closed";
  merged: boolean;
  draft: boolean;
  user: Account;
  createdAt: string;
  updatedAt: string;
}

export interface ReviewCommentRecord {
  id: number;
  pullNumber: number;
  reviewId: number;
  path: string;
  line: number | null;
  body: string;
  user: Account;
}

/** A check run on one of the repository's commits, as the Checks API keeps it. */
export interface CheckRunRecord {
  id: number;
  name: string;
  headSha: string;
  externalId: string | null;
  status: "queued" | "in_progress" | "completed";
  conclusion: string | null;
  title: string | null;
  summary: string | null;
  text: string | null;
  /** Appended by every request that sends some, as GitHub does. */
  annotations: Array<{
    path: string;
    start_line: number;
    end_line: number;
    annotation_level: string;
    message: string;
    title?: string;
  }>;
  actions: Array<{ label: string; identifier: string; description: string }>;
  /** The app whose token made it (another app's check runs are added by tests). */
  app: { id: number; slug: string };
  startedAt: string;
  completedAt: string | null;
  /** Every state it was written in, first to last: `status/conclusion`. */
  history: string[];
}

export interface IssueDraft {
  title: string;
  body?: string;
  author?: string;
}

export class RepositoryState {
  readonly issues = new Map<number, IssueRecord>();
  readonly comments: CommentRecord[] = [];
  readonly reactions: ReactionRecord[] = [];
  readonly pulls: PullRecord[] = [];
  readonly reviewComments: ReviewCommentRecord[] = [];
  readonly labels: LabelRecord[] = [];
  /**
   * The repository's "automatically delete head branches" setting; undefined leaves the field out, as GitHub does for a
   * token without `administration: read`.
   */
  deleteBranchOnMerge: boolean | undefined = undefined;
  readonly checkRuns: CheckRunRecord[] = [];
  private nextNumber = 1;
  /** Comment and reaction ids: GitHub's are unique across repositories, so repositories of one double share this. */
  private readonly allocateId: () => number;

  constructor(
    /** login → role; logins not listed are not collaborators (`none`). */
    readonly permissions: Record<string, RepositoryRole>,
    /** The app's own account, `<slug>[bot]`. */
    readonly bot: Account,
    /** Where ids come from (default: a counter of this repository's own, from 1000). */
    ids?: () => number,
  ) {
    let nextId = 1000;
    this.allocateId = ids ?? (() => nextId++);
  }

  addIssue(draft: IssueDraft, isPullRequest = false): IssueRecord {
    const now = new Date().toISOString();
    const issue: IssueRecord = {
      number: this.nextNumber++,
      title: draft.title,
      body: draft.body ?? "",
      user: { login: draft.author ?? "octocat", type: "User" },
      state: "open",
      isPullRequest,
      labels: [],
      createdAt: now,
      updatedAt: now,
    };
    this.issues.set(issue.number, issue);
    return issue;
  }

  /** A comment by a person, as if typed on GitHub (deliver its webhook to tell the app). */
  addUserComment(issueNumber: number, login: string, body: string): CommentRecord {
    return this.addComment(issueNumber, { login, type: "User" }, body, false);
  }

  addComment(issueNumber: number, user: Account, body: string, viaApp: boolean): CommentRecord {
    if (!this.issues.has(issueNumber)) throw new Error(`the double has no issue #${issueNumber}`);
    const id = this.allocateId();
    const now = new Date().toISOString();
    const comment: CommentRecord = {
      id,
      nodeId: `IC_kwDO${id}`,
      issueNumber,
      body,
      user,
      viaApp,
      createdAt: now,
      updatedAt: now,
      history: [body],
      minimized: null,
    };
    this.comments.push(comment);
    return comment;
  }

  addReaction(commentId: number, content: string, user: Account): { reaction: ReactionRecord; created: boolean } {
    const existing = this.reactions.find(
      (r) => r.commentId === commentId && r.content === content && r.user.login === user.login,
    );
    if (existing) return { reaction: existing, created: false };
    const reaction = { id: this.allocateId(), commentId, content, user };
    this.reactions.push(reaction);
    return { reaction, created: true };
  }

  addPull(draft: {
    head: string;
    base: string;
    title: string;
    body: string;
    draft: boolean;
    user: Account;
  }): PullRecord {
    const issue = this.addIssue({ title: draft.title, body: draft.body, author: draft.user.login }, true);
    issue.user = draft.user;
    const pull: PullRecord = {
      number: issue.number,
      ...draft,
      state: "open",
      merged: false,
      createdAt: issue.createdAt,
      updatedAt: issue.updatedAt,
    };
    this.pulls.push(pull);
    return pull;
  }

  /** A repository label by name (GitHub's names ignore case). */
  label(name: string): LabelRecord | undefined {
    return this.labels.find((label) => label.name.toLowerCase() === name.toLowerCase());
  }

  addLabel(draft: Omit<LabelRecord, "id">): LabelRecord {
    const label = { id: this.allocateId(), ...draft };
    this.labels.push(label);
    return label;
  }

  addCheckRun(draft: Omit<CheckRunRecord, "id" | "startedAt" | "history">): CheckRunRecord {
    const run: CheckRunRecord = {
      ...draft,
      id: this.allocateId(),
      startedAt: new Date().toISOString(),
      history: [`${draft.status}/${draft.conclusion ?? "-"}`],
    };
    this.checkRuns.push(run);
    return run;
  }

  comment(id: number): CommentRecord | undefined {
    return this.comments.find((comment) => comment.id === id);
  }

  commentsOn(issueNumber: number): CommentRecord[] {
    return this.comments.filter((comment) => comment.issueNumber === issueNumber);
  }

  /** Comments the app wrote on an issue, oldest first. */
  botComments(issueNumber: number): CommentRecord[] {
    return this.commentsOn(issueNumber).filter((comment) => comment.user.login === this.bot.login);
  }

  roleOf(login: string): RepositoryRole {
    return this.permissions[login] ?? "none";
  }
}
