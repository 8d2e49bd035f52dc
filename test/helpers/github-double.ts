import nock from "nock";
import { PLAN_CHECK_NAME } from "../../src/shared/check-run.js";
import { checkGitHubRequest } from "./github-request-check.js";
import { reportUndocumented, type UndocumentedRequest } from "./undocumented-requests.js";

export const APP_ID = 1;
export const INSTALLATION_ID = 42;
export const INSTALLATION_TOKEN = "ghs_TestInstallationToken0000000000000000";
export const BOT_LOGIN = "blueprint[bot]";

export interface DoubleComment {
  id: number;
  node_id: string;
  body: string;
  user: { login: string; type: string };
  performed_via_github_app: { id: number } | null;
  html_url: string;
  issue_url: string;
  created_at: string;
  updated_at: string;
}

export interface DoubleReview {
  id: number;
  user: { login: string; type: string };
  state: string;
  commit_id: string;
  submitted_at: string;
  body: string;
}

export interface GitHubDoubleOptions {
  owner?: string;
  repo?: string;
  issueNumber?: number;
  issueTitle?: string;
  issueBody?: string;
  issueAuthor?: string;
  /** login → permission ("admin" | "write" | "read" | "none"); others are 404 (not collaborators). */
  permissions?: Record<string, string>;
  pullRequest?: { headRef: string; headSha: string; baseRef: string; sameRepo?: boolean };
  installationPermissions?: Record<string, string>;
  /** Team members, by `org/team-slug`: the team-membership endpoint answers active for them, 404 for others. */
  teams?: Record<string, string[]>;
  /** Accounts as `GET /users/{login}` shows them; anyone else is an account with id 7 and no public e-mail. */
  users?: Record<string, { id: number; email: string | null }>;
  /** Inline comments returned for any review id. */
  reviewComments?: Array<{ path: string; line: number; body: string }>;
  /** The pull request's reviews, by id (others are 404). */
  reviews?: DoubleReview[];
  /** The repository's labels before the test (name → colour); none unless given. */
  labels?: Record<string, string>;
  /** GitHub refuses every label write (403), as it does a token without `issues: write`. */
  labelWritesRefused?: boolean;
  /**
   * The repository's "automatically delete head branches" setting; unset, the field is left out, as GitHub does for a
   * token without `administration: read`.
   */
  deleteBranchOnMerge?: boolean;
  /**
   * Runs as `GET /repos/{owner}/{repo}` is answered: a test changes the remote there, between two of Blueprint's steps.
   */
  onRepositoryRead?: () => void;
  /**
   * Who Blueprint acts as (default `blueprint[bot]` of the Blueprint App); the Action with a workflow's token is
   * `github-actions[bot]` of the GitHub Actions app, which also makes the workflows' own check runs.
   */
  bot?: { login: string; app: { id: number; slug: string } };
  /** GitHub refuses (403) to list check runs and their annotations, as for a token without `checks: read`. */
  checkReadsRefused?: boolean;
  /** GitHub refuses (403) Actions jobs' logs, as for a token without `actions: read`. */
  jobLogsRefused?: boolean;
  /** Runs as Blueprint's reaction to a comment is recorded (its 👀 at triage, before the job's lane work). */
  onReaction?: (commentId: number, content: string) => void;
}

/** A review thread as GitHub's GraphQL `reviewThreads` answers it. */
export interface DoubleThread {
  id: string;
  path: string;
  line: number | null;
  startLine: number | null;
  diffSide: "LEFT" | "RIGHT";
  isResolved: boolean;
  isOutdated: boolean;
  /** The pull request it is on. */
  pullRequest: number;
  comments: Array<{
    databaseId: number;
    body: string;
    url: string;
    diffHunk: string;
    author: { login: string; __typename: string };
    pullRequestReview: { databaseId: number } | null;
  }>;
}

export interface DoubleLabel {
  name: string;
  color: string;
  description: string | null;
}

export interface RecordedRequest {
  method: string;
  path: string;
  body: unknown;
}

/** What a double learns from the webhooks a test delivers (see recordDelivered). */
interface DeliveryListener {
  owner: string;
  repo: string;
  number: number;
  heard(action: string, comment: DoubleComment): void;
}

/** The doubles made so far (the latest few): a webhook a test delivers is heard by the ones for its thread. */
const listeners: DeliveryListener[] = [];
const LISTENERS_KEPT = 8;

/**
 * A webhook a test delivers to the App, as GitHub would have it: an `issue_comment` created or edited is a comment
 * `GET /repos/{owner}/{repo}/issues/comments/{id}` answers with (a job reads its command again before it builds), one
 * deleted is gone (404). Kept apart from the thread's listing, which stays as the test made it, unless the test added
 * the comment to the thread itself. Called for every delivery by the test App (test/helpers/app.ts).
 */
export function recordDelivered(name: string, payload: unknown): void {
  if (name !== "issue_comment") return;
  const event = payload as {
    action?: string;
    repository?: { name?: string; owner?: { login?: string } };
    issue?: { number?: number };
    comment?: DoubleComment;
  };
  const { comment, repository } = event;
  if (!comment || typeof comment.id !== "number") return;
  for (const listener of listeners)
    if (
      listener.owner === repository?.owner?.login &&
      listener.repo === repository.name &&
      listener.number === event.issue?.number
    )
      listener.heard(event.action ?? "created", comment);
}

/**
 * GitHub at the HTTP boundary, with memory: comments posted are listed back, edits stick.
 * Every request is recorded so tests can assert on what the app asked for.
 */
export function githubDouble(options: GitHubDoubleOptions = {}) {
  const owner = options.owner ?? "Codertocat";
  const repo = options.repo ?? "Hello-World";
  const number = options.issueNumber ?? 1;
  const base = `/repos/${owner}/${repo}`;
  const comments: DoubleComment[] = [];
  const reactions: Array<{ commentId: number; content: string }> = [];
  const requests: RecordedRequest[] = [];
  const pulls: Array<{
    number: number;
    node_id: string;
    head: string;
    base: string;
    title: string;
    body: string;
    draft: boolean;
    html_url: string;
    state: "open" | "closed";
    headSha?: string;
  }> = [];
  const labels: DoubleLabel[] = Object.entries(options.labels ?? {}).map(([name, color]) => ({
    name,
    color,
    description: null,
  }));
  /** The thread's labels, by name, in the order they were added. */
  const threadLabels: string[] = [];
  const labelNamed = (name: string) => labels.find((label) => label.name.toLowerCase() === name.toLowerCase());
  const commentHistory = new Map<number, string[]>();
  /** Check runs as the Checks API keeps them (each update merged in; annotations appended). */
  const checkRuns: Array<{
    id: number;
    name: string;
    head_sha: string;
    external_id: string | null;
    status: string;
    conclusion: string | null;
    output: Record<string, unknown>;
    actions: unknown[];
    app: { id: number; slug: string };
  }> = [];
  /** The app behind Blueprint's check runs (the bot's login is its slug with `[bot]`). */
  const ownApp = options.bot?.app ?? { id: APP_ID, slug: "blueprint" };
  const botLogin = options.bot?.login ?? BOT_LOGIN;
  let nextId = 1000;
  /** Comments the App heard of through a delivered webhook only (see recordDelivered), by id. */
  const delivered = new Map<number, DoubleComment>();
  listeners.unshift({
    owner,
    repo,
    number,
    heard: (action, comment) => {
      if (action === "deleted") delivered.delete(comment.id);
      else if (!comments.some((listed) => listed.id === comment.id))
        delivered.set(comment.id, {
          ...structuredClone(comment),
          issue_url: `https://api.github.com${base}/issues/${number}`,
        });
    },
  });
  listeners.splice(LISTENERS_KEPT);

  const record = (method: string, path: string, body: unknown) => requests.push({ method, path, body });
  const addComment = (body: string, user: { login: string; type: string }, viaApp: boolean): DoubleComment => {
    const id = nextId++;
    const now = new Date().toISOString();
    const comment = {
      id,
      node_id: `IC_${id}`,
      body,
      user,
      performed_via_github_app: viaApp ? { id: ownApp.id } : null,
      html_url: `https://github.com/${owner}/${repo}/issues/${number}#issuecomment-${id}`,
      issue_url: `https://api.github.com/repos/${owner}/${repo}/issues/${number}`,
      created_at: now,
      updated_at: now,
    };
    comments.push(comment);
    commentHistory.set(id, [body]);
    return comment;
  };

  const minimized: string[] = [];
  /** Check runs' annotations and Actions jobs' logs, by check run (= job) id. */
  const checkAnnotations = new Map<
    number,
    Array<{ path: string; start_line: number; title?: string; message: string }>
  >();
  const jobLogs = new Map<number, string>();
  /** Review threads of pull requests (any number), as GraphQL answers them. */
  const reviewThreads: DoubleThread[] = [];
  /** Comments on other issues and pull requests than the double's own thread (a build's pull request), by number. */
  const otherComments: Array<DoubleComment & { number: number }> = [];
  const scope = nock("https://api.github.com")
    .persist()
    .post("/graphql")
    .reply((uri, body) => {
      record("POST", uri, body);
      const { query = "", variables } = body as { query?: string; variables?: { id?: string; number?: number } };
      const id = variables?.id;
      const graph = reviewGraphQL(query, variables ?? {}, reviewThreads);
      if (graph) return [200, graph];
      // A pull request's draft state changes only through GraphQL.
      const toDraft = /convertPullRequestToDraft/.test(query)
        ? true
        : /markPullRequestReadyForReview/.test(query)
          ? false
          : null;
      if (toDraft !== null) {
        const pull = pulls.find((p) => p.node_id === id);
        if (!pull)
          return [
            200,
            {
              data: null,
              errors: [
                { type: "NOT_FOUND", message: `Could not resolve to a node with the global id of '${String(id)}'` },
              ],
            },
          ];
        pull.draft = toDraft;
        return [
          200,
          {
            data: {
              [toDraft ? "convertPullRequestToDraft" : "markPullRequestReadyForReview"]: {
                pullRequest: { isDraft: toDraft },
              },
            },
          },
        ];
      }
      if (id) minimized.push(id);
      return [200, { data: { minimizeComment: { minimizedComment: { isMinimized: true } } } }];
    })
    .get(new RegExp(`^${escape(base)}/pulls/${number}/reviews/\\d+/comments(\\?.*)?$`))
    .reply((uri) => {
      record("GET", uri, null);
      return [
        200,
        (options.reviewComments ?? []).map((c, i) => ({
          id: i + 1,
          ...c,
          original_line: c.line,
          user: { login: "maintainer", type: "User" },
        })),
      ];
    })
    .post(`/app/installations/${INSTALLATION_ID}/access_tokens`)
    .reply(201, (_uri, body) => {
      record("POST", `/app/installations/${INSTALLATION_ID}/access_tokens`, body);
      return {
        token: INSTALLATION_TOKEN,
        expires_at: new Date(Date.now() + 3600_000).toISOString(),
        permissions: options.installationPermissions ?? { contents: "write", issues: "write", pull_requests: "write" },
        repository_selection: "all",
      };
    })
    .get(new RegExp(`^${escape(base)}/collaborators/[^/]+/permission$`))
    .reply((uri) => {
      record("GET", uri, null);
      const login = decodeURIComponent(uri.split("/").at(-2) ?? "");
      const permission = options.permissions?.[login];
      if (!permission) return [404, { message: "Not Found" }];
      return [200, { permission, role_name: permission, user: { login } }];
    })
    .get(/^\/orgs\/[^/]+\/teams\/[^/]+\/memberships\/[^/]+$/)
    .reply((uri) => {
      record("GET", uri, null);
      const [, , org = "", , slug = "", , login = ""] = uri.split("/").map(decodeURIComponent);
      const members = options.teams?.[`${org}/${slug}`] ?? [];
      if (!members.includes(login)) return [404, { message: "Not Found" }];
      return [200, { url: `https://api.github.com${uri}`, role: "member", state: "active" }];
    })
    .get(/^\/users\/[^/]+$/)
    .reply((uri) => {
      record("GET", uri, null);
      const login = decodeURIComponent(uri.split("/").at(-1) ?? "");
      const user = options.users?.[login] ?? { id: 7, email: null };
      return [200, { login, id: user.id, type: "User", email: user.email }];
    })
    .post(new RegExp(`^${escape(base)}/issues/comments/\\d+/reactions$`))
    .reply((uri, body) => {
      record("POST", uri, body);
      const reaction = { commentId: Number(uri.split("/").at(-2)), content: (body as { content: string }).content };
      // As GitHub does: 200 when the App had added this reaction already, 201 when it adds it now.
      const again = reactions.some((r) => r.commentId === reaction.commentId && r.content === reaction.content);
      reactions.push(reaction);
      options.onReaction?.(reaction.commentId, reaction.content);
      return [again ? 200 : 201, { id: 1, content: reaction.content }];
    })
    .post(`${base}/issues/${number}/comments`)
    .reply((uri, body) => {
      record("POST", uri, body);
      return [201, addComment((body as { body: string }).body, { login: botLogin, type: "Bot" }, true)];
    })
    .get(new RegExp(`^${escape(base)}/issues/comments/\\d+$`))
    .reply((uri) => {
      record("GET", uri, null);
      const id = Number(uri.split("/").at(-1));
      const comment = comments.find((c) => c.id === id) ?? delivered.get(id);
      return comment ? [200, comment] : [404, { message: "Not Found" }];
    })
    .get(new RegExp(`^${escape(base)}/pulls/${number}/reviews/\\d+$`))
    .reply((uri) => {
      record("GET", uri, null);
      const review = options.reviews?.find((r) => r.id === Number(uri.split("/").at(-1)));
      return review ? [200, review] : [404, { message: "Not Found" }];
    })
    .get(new RegExp(`^${escape(base)}/pulls/\\d+/reviews/\\d+$`))
    .reply((uri) => {
      record("GET", uri, null);
      const review = options.reviews?.find((r) => r.id === Number(uri.split("/").at(-1)));
      return review ? [200, review] : [404, { message: "Not Found" }];
    })
    .post(new RegExp(`^${escape(base)}/pulls/\\d+/comments/\\d+/replies$`))
    .reply((uri, body) => {
      record("POST", uri, body);
      const commentId = Number(uri.split("/").at(-2));
      const thread = reviewThreads.find((t) => t.comments.some((c) => c.databaseId === commentId));
      if (!thread) return [404, { message: "Not Found" }];
      const id = nextId++;
      const url = `https://github.com/${owner}/${repo}/pull/${thread.pullRequest}#discussion_r${id}`;
      thread.comments.push({
        databaseId: id,
        body: (body as { body: string }).body,
        url,
        diffHunk: thread.comments[0]?.diffHunk ?? "",
        author: { login: botLogin.replace("[bot]", ""), __typename: "Bot" },
        pullRequestReview: null,
      });
      return [201, { id, html_url: url, body: (body as { body: string }).body, in_reply_to_id: commentId }];
    })
    .patch(new RegExp(`^${escape(base)}/issues/comments/\\d+$`))
    .reply((uri, body) => {
      record("PATCH", uri, body);
      const comment = comments.find((c) => c.id === Number(uri.split("/").at(-1)));
      if (!comment) return [404, { message: "Not Found" }];
      comment.body = (body as { body: string }).body;
      comment.updated_at = new Date().toISOString();
      commentHistory.get(comment.id)?.push(comment.body);
      return [200, comment];
    })
    .get(new RegExp(`^${escape(base)}/issues/${number}/comments(\\?.*)?$`))
    .reply((uri) => {
      record("GET", uri, null);
      return [200, comments];
    })
    .get(`${base}/issues/${number}`)
    .reply((uri) => {
      record("GET", uri, null);
      return [
        200,
        {
          number,
          title: options.issueTitle ?? "Spelling error in the README file",
          body: options.issueBody ?? "It looks like you accidently spelled 'commit' with two 't's.",
          user: { login: options.issueAuthor ?? "Codertocat", type: "User" },
          ...(options.pullRequest ? { pull_request: { url: `https://api.github.com${base}/pulls/${number}` } } : {}),
        },
      ];
    })
    .get(`${base}/pulls/${number}`)
    .reply((uri) => {
      record("GET", uri, null);
      const pr = options.pullRequest;
      if (!pr) return [404, { message: "Not Found" }];
      const full = `${owner}/${repo}`;
      return [
        200,
        {
          number,
          html_url: `https://github.com/${full}/pull/${number}`,
          state: "open",
          user: { login: options.issueAuthor ?? "Codertocat", type: "User" },
          head: {
            ref: pr.headRef,
            sha: pr.headSha,
            repo: { full_name: pr.sameRepo === false ? `fork/${repo}` : full },
          },
          base: { ref: pr.baseRef, repo: { full_name: full } },
        },
      ];
    })
    .get(new RegExp(`^${escape(base)}/pulls(\\?.*)?$`))
    .reply((uri) => {
      record("GET", uri, null);
      const query = new URL(`https://x${uri}`).searchParams;
      const head = query.get("head")?.split(":")[1];
      const state = query.get("state") ?? "open";
      return [200, pulls.filter((pull) => pull.head === head && (state === "all" || pull.state === state))];
    })
    .post(`${base}/pulls`)
    .reply((uri, body) => {
      record("POST", uri, body);
      const draft = body as { head: string; base: string; title: string; body: string; draft?: boolean };
      const number = 100 + pulls.length;
      const pull = {
        number,
        node_id: `PR_${number}`,
        ...draft,
        draft: draft.draft === true,
        html_url: `https://github.com/${owner}/${repo}/pull/${number}`,
        state: "open" as const,
      };
      pulls.push(pull);
      return [201, pull];
    })
    .get(new RegExp(`^${escape(base)}/commits/[0-9a-f]+/check-runs(\\?.*)?$`))
    .reply((uri) => {
      record("GET", uri, null);
      if (options.checkReadsRefused) return [403, { message: "Resource not accessible by integration" }];
      const sha = uri.split("/").at(-2);
      const name = new URL(`https://x${uri}`).searchParams.get("check_name");
      const runs = checkRuns.filter((run) => run.head_sha === sha && (!name || run.name === name));
      return [200, { total_count: runs.length, check_runs: runs }];
    })
    .post(`${base}/check-runs`)
    .reply((uri, body) => {
      record("POST", uri, body);
      const draft = body as {
        name: string;
        head_sha: string;
        external_id?: string;
        status?: string;
        conclusion?: string;
        output?: Record<string, unknown>;
        actions?: unknown[];
      };
      const run = {
        id: nextId++,
        name: draft.name,
        head_sha: draft.head_sha,
        external_id: draft.external_id ?? null,
        status: draft.conclusion ? "completed" : (draft.status ?? "queued"),
        conclusion: draft.conclusion ?? null,
        output: draft.output ?? {},
        actions: draft.actions ?? [],
        app: ownApp,
      };
      checkRuns.push(run);
      return [201, run];
    })
    .get(new RegExp(`^${escape(base)}/check-runs/\\d+$`))
    .reply((uri) => {
      record("GET", uri, null);
      const run = checkRuns.find((candidate) => candidate.id === Number(uri.split("/").at(-1)));
      return run ? [200, run] : [404, { message: "Not Found" }];
    })
    .get(new RegExp(`^${escape(base)}/check-runs/\\d+/annotations(\\?.*)?$`))
    .reply((uri) => {
      record("GET", uri, null);
      if (options.checkReadsRefused) return [403, { message: "Resource not accessible by integration" }];
      const id = Number(new URL(`https://x${uri}`).pathname.split("/").at(-2));
      return [
        200,
        (checkAnnotations.get(id) ?? []).map((note) => ({
          ...note,
          end_line: note.start_line,
          annotation_level: "failure",
        })),
      ];
    })
    .get(new RegExp(`^${escape(base)}/actions/jobs/\\d+/logs$`))
    .reply((uri) => {
      record("GET", uri, null);
      const id = Number(uri.split("/").at(-2));
      if (options.jobLogsRefused) return [403, { message: "Resource not accessible by integration" }];
      if (!jobLogs.has(id)) return [404, { message: "Not Found" }];
      // As GitHub does: a redirect to a short-lived address where the log is.
      return [302, "", { Location: `https://pipelines.actions.example/logs/${id}.txt` }];
    })
    .patch(new RegExp(`^${escape(base)}/check-runs/\\d+$`))
    .reply((uri, body) => {
      record("PATCH", uri, body);
      const run = checkRuns.find((candidate) => candidate.id === Number(uri.split("/").at(-1)));
      if (!run) return [404, { message: "Not Found" }];
      const update = body as {
        status?: string;
        conclusion?: string;
        output?: Record<string, unknown>;
        actions?: unknown[];
      };
      if (update.conclusion) Object.assign(run, { conclusion: update.conclusion, status: "completed" });
      else if (update.status) run.status = update.status;
      const annotations = [
        ...((run.output.annotations as unknown[] | undefined) ?? []),
        ...((update.output?.annotations as unknown[] | undefined) ?? []),
      ];
      run.output = { ...run.output, ...update.output, annotations };
      if (update.actions) run.actions = update.actions;
      return [200, run];
    })
    .patch(new RegExp(`^${escape(base)}/pulls/\\d+$`))
    .reply((uri, body) => {
      record("PATCH", uri, body);
      const pull = pulls.find((p) => p.number === Number(uri.split("/").at(-1)));
      if (!pull) return [404, { message: "Not Found" }];
      Object.assign(pull, body);
      return [200, pull];
    })
    .get(new RegExp(`^${escape(base)}/pulls/\\d+$`))
    .reply((uri) => {
      record("GET", uri, null);
      const pull = pulls.find((p) => p.number === Number(uri.split("/").at(-1)));
      if (!pull) return [404, { message: "Not Found" }];
      const full = `${owner}/${repo}`;
      return [
        200,
        {
          number: pull.number,
          html_url: pull.html_url,
          state: pull.state,
          draft: pull.draft,
          user: { login: botLogin, type: "Bot" },
          head: { ref: pull.head, sha: pull.headSha ?? "0".repeat(40), repo: { full_name: full } },
          base: { ref: pull.base, repo: { full_name: full } },
        },
      ];
    })
    .get(new RegExp(`^${escape(base)}/issues/\\d+$`))
    .reply((uri) => {
      record("GET", uri, null);
      const pull = pulls.find((p) => p.number === Number(uri.split("/").at(-1)));
      if (!pull) return [404, { message: "Not Found" }];
      return [
        200,
        {
          number: pull.number,
          title: pull.title,
          body: pull.body,
          user: { login: botLogin, type: "Bot" },
          pull_request: { url: `https://api.github.com${base}/pulls/${pull.number}` },
        },
      ];
    })
    .post(new RegExp(`^${escape(base)}/issues/\\d+/comments$`))
    .reply((uri, body) => {
      record("POST", uri, body);
      const other = Number(uri.split("/").at(-2));
      const made = addComment((body as { body: string }).body, { login: botLogin, type: "Bot" }, true);
      // Not on the double's own thread: kept apart, so that its listing stays the thread's.
      comments.splice(comments.indexOf(made), 1);
      const comment = {
        ...made,
        number: other,
        html_url: made.html_url.replace(`/issues/${number}#`, `/issues/${other}#`),
        issue_url: made.issue_url.replace(`/issues/${number}`, `/issues/${other}`),
      };
      otherComments.push(comment);
      return [201, comment];
    })
    .get(new RegExp(`^${escape(base)}/issues/\\d+/comments(\\?.*)?$`))
    .reply((uri) => {
      record("GET", uri, null);
      const other = Number(new URL(`https://x${uri}`).pathname.split("/").at(-2));
      return [200, otherComments.filter((c) => c.number === other)];
    })
    .get(new RegExp(`^${escape(base)}/labels(\\?.*)?$`))
    .reply((uri) => {
      record("GET", uri, null);
      return [200, labels];
    })
    .post(`${base}/labels`)
    .reply((uri, body) => {
      record("POST", uri, body);
      if (options.labelWritesRefused) return [403, { message: "Resource not accessible by integration" }];
      const wanted = body as DoubleLabel;
      if (labelNamed(wanted.name))
        return [
          422,
          { message: "Validation Failed", errors: [{ resource: "Label", code: "already_exists", field: "name" }] },
        ];
      const label = { name: wanted.name, color: wanted.color, description: wanted.description ?? null };
      labels.push(label);
      return [201, label];
    })
    .get(new RegExp(`^${escape(base)}/issues/${number}/labels(\\?.*)?$`))
    .reply((uri) => {
      record("GET", uri, null);
      return [200, threadLabels.map((name) => labelNamed(name))];
    })
    .post(`${base}/issues/${number}/labels`)
    .reply((uri, body) => {
      record("POST", uri, body);
      if (options.labelWritesRefused) return [403, { message: "Resource not accessible by integration" }];
      for (const name of (body as { labels: string[] }).labels) {
        // As GitHub does: a label the repository lacks is made, plain grey.
        if (!labelNamed(name)) labels.push({ name, color: "ededed", description: null });
        if (!threadLabels.some((carried) => carried.toLowerCase() === name.toLowerCase())) threadLabels.push(name);
      }
      return [200, threadLabels.map((name) => labelNamed(name))];
    })
    .delete(new RegExp(`^${escape(base)}/issues/${number}/labels/[^/]+$`))
    .reply((uri) => {
      record("DELETE", uri, null);
      const name = decodeURIComponent(uri.split("/").at(-1) ?? "");
      const at = threadLabels.findIndex((carried) => carried.toLowerCase() === name.toLowerCase());
      if (at === -1) return [404, { message: "Label does not exist" }];
      threadLabels.splice(at, 1);
      return [200, threadLabels.map((carried) => labelNamed(carried))];
    })
    .get(base)
    .reply((uri) => {
      record("GET", uri, null);
      options.onRepositoryRead?.();
      const setting =
        options.deleteBranchOnMerge === undefined ? {} : { delete_branch_on_merge: options.deleteBranchOnMerge };
      return [
        200,
        { name: repo, full_name: `${owner}/${repo}`, owner: { login: owner }, default_branch: "main", ...setting },
      ];
    });

  // Every request the double serves is checked against GitHub's own description of its API; one it does not document
  // fails the test (test/helpers/github-requests-documented.ts), whatever the app made of the answer.
  const violations: UndocumentedRequest[] = [];
  const operations: Array<{ method: string; path: string; operation: string | null }> = [];
  scope.on(
    "request",
    (req: { method: string; path: string; headers: Record<string, unknown> }, _: unknown, body = "") => {
      const contentType = req.headers["content-type"];
      const { operation, undocumented } = checkGitHubRequest({
        method: req.method,
        path: req.path,
        body,
        contentType: typeof contentType === "string" ? contentType : undefined,
      });
      operations.push({ method: req.method, path: req.path, operation });
      if (!undocumented) return;
      violations.push(undocumented);
      reportUndocumented(undocumented);
    },
  );

  const logs = nock("https://pipelines.actions.example")
    .persist()
    .get(/^\/logs\/\d+\.txt$/)
    .reply((uri) => {
      record("GET", `https://pipelines.actions.example${uri}`, null);
      return [200, jobLogs.get(Number(/(\d+)\.txt$/.exec(uri)?.[1])) ?? ""];
    });

  return {
    owner,
    repo,
    number,
    scope,
    logs,
    comments,
    reactions,
    minimized,
    reviewThreads,
    otherComments,
    requests,
    /** Requests GitHub does not document (each also fails the test it was made in). */
    violations,
    /** Every request checked, with the operation GitHub documents it as (null when none). */
    operations,
    pulls,
    labels,
    threadLabels,
    checkRuns,
    commentHistory,
    /** A check run already on GitHub (Blueprint's plan check unless told otherwise), as if made before the test. */
    addCheckRun: (run: {
      name?: string;
      head_sha: string;
      external_id: string | null;
      app?: { id: number; slug: string };
      conclusion?: string;
      output?: Record<string, unknown>;
      /** Its annotations, as `GET /check-runs/{id}/annotations` lists them. */
      annotations?: Array<{ path: string; start_line: number; title?: string; message: string }>;
      /** For a GitHub Actions job: its log, served through the logs endpoint's redirect. */
      log?: string;
    }) => {
      const made = {
        id: nextId++,
        name: PLAN_CHECK_NAME,
        status: "completed",
        conclusion: "neutral",
        output: {},
        actions: [],
        app: ownApp,
        ...run,
      };
      checkRuns.push(made);
      if (run.annotations) checkAnnotations.set(made.id, run.annotations);
      if (run.log !== undefined) jobLogs.set(made.id, run.log);
      return made;
    },
    /** A comment by a person, as if typed on GitHub (so it shows up in the listing). */
    addUserComment: (login: string, body: string) => addComment(body, { login, type: "User" }, false),
    /** A comment as if Blueprint had written it earlier (e.g. a plan from a previous run). */
    addBotComment: (body: string | ((id: number) => string)) => {
      const comment = addComment(typeof body === "string" ? body : "", { login: botLogin, type: "Bot" }, true);
      // A state marker is signed for the comment that holds it: render it once the id is known.
      if (typeof body !== "string") {
        comment.body = body(comment.id);
        commentHistory.set(comment.id, [comment.body]);
      }
      return comment;
    },
    /** A comment by another GitHub App's bot (another login, another app id). */
    addOtherBotComment: (login: string, appId: number, body: (id: number) => string) => {
      const comment = addComment("", { login, type: "Bot" }, false);
      comment.performed_via_github_app = { id: appId };
      comment.body = body(comment.id);
      return comment;
    },
    /**
     * A review thread on a pull request, as if a reviewer had started it: its first comment (by `author`, in review
     * `reviewId`), on `path` at `line` (to `line` from `startLine`), with the diff hunk GitHub shows above it.
     */
    addReviewThread: (thread: {
      pullRequest: number;
      path: string;
      line: number;
      startLine?: number;
      body: string;
      diffHunk: string;
      author?: string;
      reviewId?: number;
      resolved?: boolean;
      outdated?: boolean;
    }) => {
      const id = nextId++;
      const made: DoubleThread = {
        id: `PRRT_${id}`,
        path: thread.path,
        line: thread.outdated ? null : thread.line,
        startLine: thread.startLine ?? null,
        diffSide: "RIGHT",
        isResolved: thread.resolved ?? false,
        isOutdated: thread.outdated ?? false,
        pullRequest: thread.pullRequest,
        comments: [
          {
            databaseId: id,
            body: thread.body,
            url: `https://github.com/${owner}/${repo}/pull/${thread.pullRequest}#discussion_r${id}`,
            diffHunk: thread.diffHunk,
            author: { login: thread.author ?? "maintainer", __typename: "User" },
            pullRequestReview: thread.reviewId === undefined ? null : { databaseId: thread.reviewId },
          },
        ],
      };
      reviewThreads.push(made);
      return made;
    },
    /** A person deletes a comment on the thread (one listed, or one the App heard of by webhook): GitHub has it no more. */
    deleteComment: (id: number) => {
      const at = comments.findIndex((comment) => comment.id === id);
      if (at !== -1) comments.splice(at, 1);
      delivered.delete(id);
    },
    /** A person edits a comment on the thread (one listed, or one the App heard of by webhook). */
    editComment: (id: number, body: string) => {
      const comment = comments.find((candidate) => candidate.id === id) ?? delivered.get(id);
      if (!comment) throw new Error(`the double has no comment ${id}`);
      comment.body = body;
      comment.updated_at = new Date().toISOString();
      commentHistory.get(id)?.push(body);
    },
    /** Comments Blueprint wrote. */
    botComments: () => comments.filter((c) => c.user.login === botLogin),
    done: () => nock.cleanAll(),
  };
}

export type GitHubDouble = ReturnType<typeof githubDouble>;

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/**
 * GraphQL's review threads: the `reviewThreads` connection of a pull request (one page), and `resolveReviewThread`.
 * Null for any other query.
 */
function reviewGraphQL(
  query: string,
  variables: { id?: string; number?: number },
  threads: DoubleThread[],
): Record<string, unknown> | null {
  if (/resolveReviewThread/.test(query)) {
    const thread = threads.find((t) => t.id === variables.id);
    if (!thread)
      return {
        data: null,
        errors: [
          { type: "NOT_FOUND", message: `Could not resolve to a node with the global id of '${String(variables.id)}'` },
        ],
      };
    thread.isResolved = true;
    return { data: { resolveReviewThread: { thread: { id: thread.id, isResolved: true } } } };
  }
  if (!/reviewThreads/.test(query)) return null;
  const nodes = threads
    .filter((t) => t.pullRequest === variables.number)
    .map(({ pullRequest: _pullRequest, comments, ...thread }) => ({ ...thread, comments: { nodes: comments } }));
  return {
    data: {
      repository: {
        pullRequest: { reviewThreads: { pageInfo: { hasNextPage: false, endCursor: null }, nodes } },
      },
    },
  };
}
