import type { Octokit as RestOctokit } from "@octokit/rest";
import { toPermissionLevel, type PermissionLevel } from "./permission.js";
import type { PullRequestDraft, PullRequestReview, Reaction, RepositoryInfo, ThreadComment, ThreadInfo, ThreadPort } from "../workflow/ports.js";

/**
 * The part of Octokit the port uses. Probot's installation Octokit (the App) and @octokit/rest
 * with a token (the Action) both have it.
 */
export type PortOctokit = Pick<RestOctokit, "rest" | "paginate" | "graphql" | "auth">;

type IssueComment = Awaited<ReturnType<RestOctokit["rest"]["issues"]["getComment"]>>["data"];

/** A GET's data, or null when GitHub answers 404 (the thing is gone, or never was). */
async function notFoundAsNull<T>(request: Promise<{ data: T }>): Promise<T | null> {
  try {
    return (await request).data;
  } catch (error) {
    if ((error as { status?: number }).status === 404) return null;
    throw error;
  }
}

interface InstallationAuth {
  token?: string;
  permissions?: Record<string, string>;
}

export interface OctokitPortOptions {
  octokit: PortOctokit;
  repo: RepositoryInfo;
  number: number;
  /** Comments made by this app: matched by the app id GitHub records on them, or by the bot login (and, in the Action, the state marker). */
  isOwnComment: (comment: { user: { login: string; type: string } | null; performed_via_github_app?: { id: number } | null; body: string }) => boolean;
}

/** The ThreadPort over GitHub's REST API, for one issue or pull request. */
export function createOctokitPort(options: OctokitPortOptions): ThreadPort {
  const { octokit, repo, number } = options;
  const where = { owner: repo.owner, repo: repo.name };
  // Asked at each use, not kept: a job's token may be renewed while it works (a build that outlasts its hour).
  const installationAuth = () => octokit.auth({ type: "installation" }) as Promise<InstallationAuth>;

  const threadComment = (comment: IssueComment): ThreadComment => ({
    id: comment.id,
    nodeId: comment.node_id,
    url: comment.html_url,
    body: comment.body ?? "",
    author: comment.user?.login ?? "ghost",
    authorIsBot: comment.user?.type === "Bot",
    own: options.isOwnComment({ user: comment.user ?? null, performed_via_github_app: comment.performed_via_github_app ?? null, body: comment.body ?? "" }),
    createdAt: comment.created_at,
    updatedAt: comment.updated_at,
  });

  return {
    repo,
    number,
    async info(): Promise<ThreadInfo> {
      const { data: issue } = await octokit.rest.issues.get({ ...where, issue_number: number });
      const base = { number, title: issue.title, body: issue.body ?? "", author: issue.user?.login ?? "ghost" };
      if (!issue.pull_request) return { kind: "issue", ...base };
      const { data: pr } = await octokit.rest.pulls.get({ ...where, pull_number: number });
      return {
        kind: "pull_request",
        ...base,
        pullRequest: {
          number,
          headRef: pr.head.ref,
          headSha: pr.head.sha,
          baseRef: pr.base.ref,
          sameRepo: pr.head.repo?.full_name === pr.base.repo.full_name,
          url: pr.html_url,
        },
      };
    },
    async comments(): Promise<ThreadComment[]> {
      const all = await octokit.paginate(octokit.rest.issues.listComments, { ...where, issue_number: number, per_page: 100 });
      return all.map(threadComment);
    },
    async comment(id) {
      const comment = await notFoundAsNull(octokit.rest.issues.getComment({ ...where, comment_id: id }));
      // The comments endpoint is per repository: one on another issue is not this thread's.
      return comment && comment.issue_url.endsWith(`/issues/${number}`) ? threadComment(comment) : null;
    },
    async review(id): Promise<PullRequestReview | null> {
      const review = await notFoundAsNull(octokit.rest.pulls.getReview({ ...where, pull_number: number, review_id: id }));
      return review ? { author: review.user?.login ?? "ghost", state: review.state, submittedAt: review.submitted_at ?? null, commitId: review.commit_id ?? "" } : null;
    },
    async postComment(body) {
      const { data } = await octokit.rest.issues.createComment({ ...where, issue_number: number, body });
      return { id: data.id, url: data.html_url };
    },
    async updateComment(id, body) {
      await octokit.rest.issues.updateComment({ ...where, comment_id: id, body });
    },
    async reactToComment(commentId: number, reaction: Reaction) {
      await octokit.rest.reactions.createForIssueComment({ ...where, comment_id: commentId, content: reaction });
    },
    async permission(login): Promise<PermissionLevel> {
      try {
        const { data } = await octokit.rest.repos.getCollaboratorPermissionLevel({ ...where, username: login });
        return toPermissionLevel({ permission: data.permission, role_name: data.role_name });
      } catch (error) {
        if ((error as { status?: number }).status === 404) return "none";
        throw error;
      }
    },
    async teamMember(org, teamSlug, login) {
      try {
        const { data } = await octokit.rest.teams.getMembershipForUserInOrg({ org, team_slug: teamSlug, username: login });
        // A pending invitation is not membership yet.
        return data.state === "active";
      } catch (error) {
        if ((error as { status?: number }).status === 404) return false;
        throw error;
      }
    },
    async account(login) {
      try {
        const { data } = await octokit.rest.users.getByUsername({ username: login });
        return { login: data.login, id: data.id, email: data.email ?? null };
      } catch (error) {
        if ((error as { status?: number }).status === 404) return null;
        throw error;
      }
    },
    async gitToken() {
      return (await installationAuth()).token ?? null;
    },
    commitUrl(sha) {
      return `${repo.htmlUrl}/commit/${sha}`;
    },
    async upsertPullRequest(draft: PullRequestDraft) {
      const { data: open } = await octokit.rest.pulls.list({ ...where, state: "open", head: `${repo.owner}:${draft.head}`, per_page: 1 });
      const existing = open[0];
      if (existing) {
        await octokit.rest.pulls.update({ ...where, pull_number: existing.number, title: draft.title, body: draft.body });
        // REST cannot change a pull request's draft state; GraphQL can.
        if (Boolean(existing.draft) !== draft.draft) {
          await octokit.graphql(
            draft.draft
              ? "mutation($id: ID!) { convertPullRequestToDraft(input: { pullRequestId: $id }) { pullRequest { isDraft } } }"
              : "mutation($id: ID!) { markPullRequestReadyForReview(input: { pullRequestId: $id }) { pullRequest { isDraft } } }",
            { id: existing.node_id },
          );
        }
        return { number: existing.number, url: existing.html_url, created: false };
      }
      const { data } = await octokit.rest.pulls.create({ ...where, head: draft.head, base: draft.base, title: draft.title, body: draft.body, draft: draft.draft });
      return { number: data.number, url: data.html_url, created: true };
    },
    async reviewComments(reviewId) {
      const all = await octokit.paginate(octokit.rest.pulls.listCommentsForReview, { ...where, pull_number: number, review_id: reviewId, per_page: 100 });
      return all.map((comment) => ({
        path: comment.path,
        line: comment.line ?? comment.original_line ?? null,
        body: comment.body,
        author: comment.user?.login ?? "ghost",
      }));
    },
    async minimizeComment(comment) {
      if (!comment.nodeId) return;
      await octokit.graphql(
        "mutation($id: ID!) { minimizeComment(input: { subjectId: $id, classifier: OUTDATED }) { minimizedComment { isMinimized } } }",
        { id: comment.nodeId },
      );
    },
    async canWriteWorkflows() {
      const granted = await installationAuth().catch((): InstallationAuth => ({}));
      return granted.permissions?.workflows === "write";
    },
  };
}
