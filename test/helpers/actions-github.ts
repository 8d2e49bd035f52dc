import nock from "nock";

/** A GitHub Enterprise Server as the Action sees it: REST under /api/v3, comments written as github-actions[bot]. */
export const GHES_API_URL = "https://ghes.example.test/api/v3";
export const ACTIONS_TOKEN = "ghs_ActionsJobToken000000000000000000000";
export const ACTIONS_BOT = "github-actions[bot]";

export interface ActionsComment {
  id: number;
  node_id: string;
  body: string;
  user: { login: string; type: string };
  html_url: string;
  created_at: string;
  updated_at: string;
}

export interface ActionsDoubleOptions {
  owner?: string;
  repo?: string;
  number?: number;
  /** login → permission; others are not collaborators (404). */
  permissions?: Record<string, string>;
  /** Makes the thread a pull request from a branch of the same repository. */
  pullRequest?: { headRef: string; headSha: string; baseRef: string };
  /** Whether the job's token may write check runs (the workflow's `checks: write`); without it GitHub answers 403. */
  checks?: "write" | "none";
}

/** The latest double's ear for the event a step is given (see eventGiven). */
let listener: ((comment: ActionsComment) => void) | null = null;

/**
 * The event a test gives the Action's step (test/action/support.ts): the comment of an `issue_comment` event exists on
 * GitHub, so `GET …/issues/comments/{id}` answers with it (a `/build` is read again before it builds), the thread's
 * listing staying as the test made it.
 */
export function eventGiven(eventName: string, event: unknown): void {
  const comment = (event as { comment?: ActionsComment }).comment;
  if (eventName === "issue_comment" && comment && typeof comment.id === "number") listener?.(structuredClone(comment));
}

/**
 * GitHub at the HTTP boundary for the Action's tests, with memory; records every request and its Authorization header.
 */
export function actionsGitHubDouble(options: ActionsDoubleOptions = {}) {
  const owner = options.owner ?? "Codertocat";
  const repo = options.repo ?? "Hello-World";
  const number = options.number ?? 1;
  const base = `/api/v3/repos/${owner}/${repo}`;
  const html = `https://ghes.example.test/${owner}/${repo}`;
  const comments: ActionsComment[] = [];
  const reactions: Array<{ commentId: number; content: string }> = [];
  const pulls: Array<{ number: number; head: string; base: string; title: string; body: string; html_url: string }> =
    [];
  const requests: Array<{ method: string; path: string; authorization: string }> = [];
  /** The repository's label names, and the thread's. */
  const labels: string[] = [];
  const threadLabels: string[] = [];
  const checkRuns: Array<{
    id: number;
    name: string;
    head_sha: string;
    external_id: string | null;
    status: string;
    conclusion: string | null;
    actions: unknown[];
    app: { id: number; slug: string };
  }> = [];
  const noChecks = [403, { message: "Resource not accessible by integration" }] as const;
  let nextId = 5000;
  /** Comments the step's event names that the test did not add to the thread, by id. */
  const given = new Map<number, ActionsComment>();
  /** Comments deleted on GitHub (before the step read them): not found from then on, the step's event's too. */
  const deleted = new Set<number>();
  listener = (comment) => {
    if (!comments.some((listed) => listed.id === comment.id) && !deleted.has(comment.id))
      given.set(comment.id, comment);
  };

  const addComment = (body: string, user: { login: string; type: string }): ActionsComment => {
    const id = nextId++;
    const now = new Date().toISOString();
    const comment = {
      id,
      node_id: `IC_${id}`,
      body,
      user,
      html_url: `${html}/issues/${number}#issuecomment-${id}`,
      created_at: now,
      updated_at: now,
    };
    comments.push(comment);
    return comment;
  };
  const track = function (this: { req: { method: string; path: string; headers: Record<string, string> } }) {
    requests.push({
      method: this.req.method,
      path: this.req.path,
      authorization: this.req.headers.authorization ?? "",
    });
  };

  const scope = nock("https://ghes.example.test")
    .persist()
    .get(`${base}/issues/${number}`)
    .reply(function () {
      track.call(this);
      const pull = options.pullRequest
        ? { pull_request: { url: `${GHES_API_URL}/repos/${owner}/${repo}/pulls/${number}` } }
        : {};
      return [
        200,
        {
          number,
          title: "Spelling error in the README file",
          body: "It looks like you accidently spelled 'commit' with two 't's.",
          user: { login: "Codertocat", type: "User" },
          ...pull,
        },
      ];
    })
    .get(`${base}/pulls/${number}`)
    .reply(function () {
      track.call(this);
      const pr = options.pullRequest;
      if (!pr) return [404, { message: "Not Found" }];
      const full = `${owner}/${repo}`;
      return [
        200,
        {
          number,
          html_url: `${html}/pull/${number}`,
          head: { ref: pr.headRef, sha: pr.headSha, repo: { full_name: full } },
          base: { ref: pr.baseRef, repo: { full_name: full } },
        },
      ];
    })
    .get(new RegExp(`^${escape(base)}/issues/${number}/comments(\\?.*)?$`))
    .reply(function () {
      track.call(this);
      return [200, comments];
    })
    .post(`${base}/issues/${number}/comments`)
    .reply(function (_uri, body) {
      track.call(this);
      return [201, addComment((body as { body: string }).body, { login: ACTIONS_BOT, type: "Bot" })];
    })
    .get(new RegExp(`^${escape(base)}/issues/comments/\\d+$`))
    .reply(function (uri) {
      track.call(this);
      const id = Number(uri.split("/").at(-1));
      const comment = comments.find((c) => c.id === id) ?? given.get(id);
      const issueUrl = `${GHES_API_URL}/repos/${owner}/${repo}/issues/${number}`;
      return comment ? [200, { ...comment, issue_url: issueUrl }] : [404, { message: "Not Found" }];
    })
    .patch(new RegExp(`^${escape(base)}/issues/comments/\\d+$`))
    .reply(function (uri, body) {
      track.call(this);
      const comment = comments.find((c) => c.id === Number(uri.split("/").at(-1)));
      if (!comment) return [404, { message: "Not Found" }];
      comment.body = (body as { body: string }).body;
      comment.updated_at = new Date().toISOString();
      return [200, comment];
    })
    .post(new RegExp(`^${escape(base)}/issues/comments/\\d+/reactions$`))
    .reply(function (uri, body) {
      track.call(this);
      const content = (body as { content: string }).content;
      const commentId = Number(uri.split("/").at(-2));
      // GitHub answers 200 when this account had reacted so already, 201 when the reaction is new.
      const again = reactions.some((reaction) => reaction.commentId === commentId && reaction.content === content);
      reactions.push({ commentId, content });
      return [again ? 200 : 201, { id: 1, content }];
    })
    .get(new RegExp(`^${escape(base)}/collaborators/[^/]+/permission$`))
    .reply(function (uri) {
      track.call(this);
      const login = decodeURIComponent(uri.split("/").at(-2) ?? "");
      const permission = options.permissions?.[login];
      if (!permission) return [404, { message: "Not Found" }];
      return [200, { permission, role_name: permission, user: { login } }];
    })
    .get(new RegExp(`^${escape(base)}/pulls(\\?.*)?$`))
    .reply(function (uri) {
      track.call(this);
      const head = new URL(`https://x${uri}`).searchParams.get("head")?.split(":")[1];
      return [200, pulls.filter((pull) => pull.head === head)];
    })
    .post(`${base}/pulls`)
    .reply(function (_uri, body) {
      track.call(this);
      const draft = body as { head: string; base: string; title: string; body: string };
      const pull = { number: 200 + pulls.length, ...draft, html_url: `${html}/pull/${200 + pulls.length}` };
      pulls.push(pull);
      return [201, pull];
    })
    .get(new RegExp(`^${escape(base)}/labels(\\?.*)?$`))
    .reply(function () {
      track.call(this);
      return [200, labels.map((name) => ({ name }))];
    })
    .post(`${base}/labels`)
    .reply(function (_uri, body) {
      track.call(this);
      const { name } = body as { name: string };
      if (labels.includes(name))
        return [
          422,
          { message: "Validation Failed", errors: [{ resource: "Label", code: "already_exists", field: "name" }] },
        ];
      labels.push(name);
      return [201, body];
    })
    .get(new RegExp(`^${escape(base)}/issues/${number}/labels(\\?.*)?$`))
    .reply(function () {
      track.call(this);
      return [200, threadLabels.map((name) => ({ name }))];
    })
    .post(`${base}/issues/${number}/labels`)
    .reply(function (_uri, body) {
      track.call(this);
      for (const name of (body as { labels: string[] }).labels)
        if (!threadLabels.includes(name)) threadLabels.push(name);
      return [200, threadLabels.map((name) => ({ name }))];
    })
    .delete(new RegExp(`^${escape(base)}/issues/${number}/labels/[^/]+$`))
    .reply(function (uri) {
      track.call(this);
      const at = threadLabels.indexOf(decodeURIComponent(uri.split("/").at(-1) ?? ""));
      if (at === -1) return [404, { message: "Label does not exist" }];
      threadLabels.splice(at, 1);
      return [200, threadLabels.map((name) => ({ name }))];
    })
    .get(new RegExp(`^${escape(base)}/commits/[0-9a-f]+/check-runs(\\?.*)?$`))
    .reply(function (uri) {
      track.call(this);
      if (options.checks === "none") return noChecks;
      const runs = checkRuns.filter((run) => run.head_sha === uri.split("/").at(-2));
      return [200, { total_count: runs.length, check_runs: runs }];
    })
    .post(`${base}/check-runs`)
    .reply(function (_uri, body) {
      track.call(this);
      if (options.checks === "none") return noChecks;
      const draft = body as {
        name: string;
        head_sha: string;
        external_id?: string;
        status?: string;
        conclusion?: string;
        actions?: unknown[];
      };
      // Check runs made with a workflow's token are the GitHub Actions app's.
      const run = {
        id: nextId++,
        name: draft.name,
        head_sha: draft.head_sha,
        external_id: draft.external_id ?? null,
        status: draft.conclusion ? "completed" : (draft.status ?? "queued"),
        conclusion: draft.conclusion ?? null,
        actions: draft.actions ?? [],
        app: { id: 15368, slug: "github-actions" },
      };
      checkRuns.push(run);
      return [201, run];
    })
    .patch(new RegExp(`^${escape(base)}/check-runs/\\d+$`))
    .reply(function (uri, body) {
      track.call(this);
      if (options.checks === "none") return noChecks;
      const run = checkRuns.find((candidate) => candidate.id === Number(uri.split("/").at(-1)));
      if (!run) return [404, { message: "Not Found" }];
      const update = body as { status?: string; conclusion?: string; actions?: unknown[] };
      if (update.conclusion) Object.assign(run, { conclusion: update.conclusion, status: "completed" });
      else if (update.status) run.status = update.status;
      if (update.actions) run.actions = update.actions;
      return [200, run];
    });

  return {
    owner,
    repo,
    number,
    htmlUrl: html,
    scope,
    comments,
    reactions,
    pulls,
    checkRuns,
    requests,
    labels,
    threadLabels,
    addUserComment: (login: string, body: string) => addComment(body, { login, type: "User" }),
    /** A comment as if an earlier run of the Action had written it. */
    addBotComment: (body: string | ((id: number) => string)) => {
      const comment = addComment(typeof body === "string" ? body : "", { login: ACTIONS_BOT, type: "Bot" });
      // A state marker is signed for the comment that holds it: render it once the id is known.
      if (typeof body !== "string") comment.body = body(comment.id);
      return comment;
    },
    botComments: () => comments.filter((c) => c.user.login === ACTIONS_BOT),
    /** A person deletes a comment (one on the thread, or one a step's event names, before or after it is given). */
    deleteComment: (id: number) => {
      deleted.add(id);
      given.delete(id);
      const at = comments.findIndex((comment) => comment.id === id);
      if (at !== -1) comments.splice(at, 1);
    },
  };
}

export type ActionsGitHubDouble = ReturnType<typeof actionsGitHubDouble>;

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
