import { promises as fs } from "node:fs";
import { pathToFileURL } from "node:url";
import { findThreadState, type ThreadStateLookup } from "../github/plan-comment.js";
import type { PullRequestDraft, RepositoryInfo, ThreadComment, ThreadInfo, ThreadPort } from "../workflow/ports.js";
import type { Checkout } from "./checkout.js";
import type { ThreadSeal } from "../github/state-marker.js";
import { LOCAL_REPOSITORY, type StoredComment, type StoredThread, type ThreadStore } from "./thread-store.js";

export interface LocalWrite {
  kind: "posted" | "updated";
  comment: StoredComment;
}

export interface LocalThread {
  port: ThreadPort;
  /** Adds a comment by the person at the terminal (a command, an answer) and returns its id. */
  addUserComment(body: string, author: string): Promise<number>;
  /** Where the pull-request text of the last build was written. */
  pullRequestFile: string;
}

/** No labels and no merges locally: the thread file records the state, and the branch is the result. */
const NO_LABELS_OR_MERGES: Pick<
  ThreadPort,
  "threadLabels" | "repositoryLabels" | "createLabel" | "addThreadLabel" | "removeThreadLabel" | "deletesMergedBranches"
> = {
  threadLabels: async () => [],
  repositoryLabels: async () => [],
  createLabel: async () => false,
  addThreadLabel: async () => {},
  removeThreadLabel: async () => {},
  deletesMergedBranches: async () => false,
};

/**
 * A ThreadPort over a local thread file: the comments live in .git/blueprint, the "remote" is the
 * checkout itself (file://), the user at the terminal is admin, and a pull request is just its branch.
 */
export function createLocalThread(
  checkout: Checkout,
  store: ThreadStore,
  thread: StoredThread,
  onWrite: (write: LocalWrite) => void = () => {},
): LocalThread {
  const threadFile = store.fileOf(thread.number);
  const pullRequestFile = threadFile.replace(/\.json$/, "-pull-request.md");
  const repo = localRepository(checkout, thread);
  const url = (id: number) => `${pathToFileURL(threadFile).href}#comment-${id}`;
  const add = async (body: string, author: string, own: boolean): Promise<StoredComment> => {
    const now = new Date().toISOString();
    const comment: StoredComment = { id: thread.nextId++, body, author, own, createdAt: now, updatedAt: now };
    thread.comments.push(comment);
    await store.save(thread);
    return comment;
  };
  const toThreadComment = (comment: StoredComment): ThreadComment => asThreadComment(comment, url(comment.id));

  const port: ThreadPort = {
    repo,
    number: thread.number,
    info: async () => localThreadInfo(thread),
    async comments() {
      return thread.comments.map(toThreadComment);
    },
    async postComment(body) {
      const comment = await add(body, "blueprint", true);
      onWrite({ kind: "posted", comment });
      return { id: comment.id, url: url(comment.id) };
    },
    async updateComment(id, body) {
      const comment = thread.comments.find((c) => c.id === id);
      if (!comment) throw new Error(`the thread has no comment ${id}`);
      comment.body = body;
      comment.updatedAt = new Date().toISOString();
      await store.save(thread);
      onWrite({ kind: "updated", comment });
    },
    reactToComment: async () => {},
    permission: async () => "admin",
    // The person at the terminal is admin of their checkout, and stands for every team as well.
    teamMember: async () => true,
    // No GitHub here: an e-mail owner matches nobody, and team owners match the person at the terminal.
    account: async () => null,
    gitToken: async () => null,
    commitUrl: (sha) => `${checkout.cloneUrl}#commit-${sha}`,
    async upsertPullRequest(draft: PullRequestDraft) {
      // No pull requests locally: the branch is the result; its description is kept for `gh pr create --body-file`.
      await fs.writeFile(pullRequestFile, `${draft.title}\n\n${draft.body}\n`, "utf8");
      return { number: 0, url: `branch ${draft.head}`, created: true };
    },
    canWriteWorkflows: async () => true,
    // A local checkout has no check runs.
    checks: null,
    // No pull requests, so no review threads: `blueprint fix` brings its notes itself.
    reviews: null,
    reviewComments: async () => [],
    async comment(id) {
      const comment = thread.comments.find((c) => c.id === id);
      return comment ? toThreadComment(comment) : null;
    },
    // No reviews locally.
    review: async () => null,
    minimizeComment: async () => {},
    ...NO_LABELS_OR_MERGES,
  };
  return {
    port,
    pullRequestFile,
    addUserComment: async (body, author) => (await add(body, author, false)).id,
  };
}

/** The checkout as the thread's repository: its clone URL stands for the remote and the web page. */
function localRepository(checkout: Checkout, thread: StoredThread): RepositoryInfo {
  return {
    ...LOCAL_REPOSITORY,
    cloneUrl: checkout.cloneUrl,
    defaultBranch: thread.baseBranch,
    htmlUrl: checkout.cloneUrl,
  };
}

/** The stored thread described as the issue that requested it. */
function localThreadInfo(thread: StoredThread): ThreadInfo {
  return {
    kind: "issue",
    number: thread.number,
    title: thread.title,
    body: `Requested by ${thread.requestedBy} with the Blueprint CLI, on branch \`${thread.baseBranch}\` of a local checkout.`,
    author: thread.requestedBy,
  };
}

/** Where a stored thread stands, read the way the App reads a GitHub thread. */
export function storedThreadState(
  thread: StoredThread,
  seal: ThreadSeal,
  urlOf: (id: number) => string = () => "",
): ThreadStateLookup {
  return findThreadState(
    thread.comments.map((comment) => asThreadComment(comment, urlOf(comment.id))),
    seal,
  );
}

function asThreadComment(comment: StoredComment, url: string): ThreadComment {
  return { ...comment, url, authorIsBot: comment.own };
}
