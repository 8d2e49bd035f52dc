import type { ServedRepository } from "./git-http.js";
import type {
  Account,
  CheckRunRecord,
  CommentRecord,
  IssueRecord,
  LabelRecord,
  PullRecord,
  RepositoryState,
} from "./state.js";

/** What the REST handlers see of the double. */
export interface DoubleContext {
  state: RepositoryState;
  repository: ServedRepository;
  /** `http://127.0.0.1:<port>` — the web host (html_url, clone_url). */
  webUrl: string;
  /** `http://127.0.0.1:<port>/api/v3`. */
  apiUrl: string;
  appId: number;
  appSlug: string;
}

export interface RestRequest {
  params: Record<string, string>;
  query: URLSearchParams;
  body: Record<string, unknown>;
  /** The path as requested (for pagination links). */
  pathname: string;
}

export interface RestReply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export interface RestRoute {
  method: string;
  template: string;
  /** `app`: a JWT signed with the App's key; `installation`: an installation token. */
  auth: "app" | "installation";
  /** The permission the token needs (others are answered 403). */
  needs?: [string, "read" | "write"];
  handle(double: DoubleContext, request: RestRequest): RestReply;
}

const REPO = "/repos/{owner}/{repo}";
const notFound: RestReply = {
  status: 404,
  body: { message: "Not Found", documentation_url: "https://docs.github.com/enterprise-server@3.19/rest" },
};
const invalid = (resource: string, field: string, message: string): RestReply => ({
  status: 422,
  body: {
    message: "Validation Failed",
    errors: [{ resource, field, code: "custom", message }],
    documentation_url: "https://docs.github.com/enterprise-server@3.19/rest",
  },
});
/** GitHub's limit on issue, comment and pull-request bodies. */
const MAX_BODY = 65_536;
/** The Checks API's limits: annotations per request, and a button's label, identifier and description. */
const ANNOTATIONS_PER_REQUEST = 50;
const ACTION_LIMITS = { label: 20, identifier: 20, description: 40, count: 3 };

/** Labels and branches: what Blueprint's thread labels and its clean-up after a merge use. */
const LABEL_AND_BRANCH_ROUTES: RestRoute[] = [
  route("GET", REPO, (double) => ok(renderRepository(double))),
  route("GET", `${REPO}/labels`, (double, request) =>
    paginate(
      double,
      request,
      double.state.labels.map((label) => renderLabel(double, label)),
    ),
  ),
  route("POST", `${REPO}/labels`, (double, { body }) => {
    if (typeof body.name !== "string" || body.name.trim() === "") return invalid("Label", "name", "name is missing");
    if (double.state.label(body.name))
      return {
        status: 422,
        body: { message: "Validation Failed", errors: [{ resource: "Label", code: "already_exists", field: "name" }] },
      };
    if (typeof body.color === "string" && !/^[0-9a-fA-F]{6}$/.test(body.color))
      return invalid("Label", "color", "color is invalid");
    if (typeof body.description === "string" && body.description.length > 100)
      return invalid("Label", "description", "description is too long (maximum is 100 characters)");
    const label = double.state.addLabel({
      name: body.name,
      color: typeof body.color === "string" ? body.color.toLowerCase() : "ededed",
      description: typeof body.description === "string" ? body.description : null,
    });
    return { status: 201, body: renderLabel(double, label) };
  }),
  route("GET", `${REPO}/issues/{issue_number}/labels`, (double, request) => {
    const issue = double.state.issues.get(Number(request.params.issue_number));
    return issue ? paginate(double, request, issueLabels(double, issue)) : notFound;
  }),
  route("POST", `${REPO}/issues/{issue_number}/labels`, (double, { params, body }) => {
    const issue = double.state.issues.get(Number(params.issue_number));
    if (!issue) return notFound;
    if (!Array.isArray(body.labels) || !body.labels.every((name): name is string => typeof name === "string"))
      return invalid("Label", "labels", "labels must be a list of names");
    for (const name of body.labels) {
      // As GitHub does: a name the repository has no label for gets a new, plain grey one.
      const label = double.state.label(name) ?? double.state.addLabel({ name, color: "ededed", description: null });
      if (!issue.labels.some((carried) => carried.toLowerCase() === label.name.toLowerCase()))
        issue.labels.push(label.name);
    }
    return ok(issueLabels(double, issue));
  }),
  route("DELETE", `${REPO}/issues/{issue_number}/labels/{name}`, (double, { params }) => {
    const issue = double.state.issues.get(Number(params.issue_number));
    const at = issue
      ? issue.labels.findIndex((carried) => carried.toLowerCase() === (params.name ?? "").toLowerCase())
      : -1;
    if (!issue || at === -1)
      return {
        status: 404,
        body: {
          message: "Label does not exist",
          documentation_url: "https://docs.github.com/enterprise-server@3.19/rest",
        },
      };
    issue.labels.splice(at, 1);
    return ok(issueLabels(double, issue));
  }),
  route("DELETE", `${REPO}/git/refs/{ref}`, (double, { params }) => {
    const ref = `refs/${params.ref ?? ""}`;
    if (!/^refs\/heads\/./.test(ref) || ref.includes(".."))
      return invalid("Reference", "ref", "Reference update failed");
    if (!double.repository.head(ref.slice("refs/heads/".length)))
      return {
        status: 422,
        body: {
          message: "Reference does not exist",
          documentation_url: "https://docs.github.com/enterprise-server@3.19/rest",
        },
      };
    double.repository.git(["update-ref", "-d", ref]);
    return { status: 204 };
  }),
];

/** The REST operations the double implements — the ones Blueprint's ThreadPort uses. */
export const REST_ROUTES: RestRoute[] = [
  route("GET", `${REPO}/issues/{issue_number}`, (double, { params }) => {
    const issue = double.state.issues.get(Number(params.issue_number));
    return issue ? ok(renderIssue(double, issue)) : notFound;
  }),
  route("GET", `${REPO}/issues/{issue_number}/comments`, (double, request) => {
    const issue = double.state.issues.get(Number(request.params.issue_number));
    if (!issue) return notFound;
    return paginate(
      double,
      request,
      double.state.commentsOn(issue.number).map((comment) => renderComment(double, comment)),
    );
  }),
  route("POST", `${REPO}/issues/{issue_number}/comments`, (double, { params, body }) => {
    const issue = double.state.issues.get(Number(params.issue_number));
    if (!issue) return notFound;
    if (typeof body.body !== "string") return invalid("IssueComment", "body", "body is missing");
    if (body.body.length > MAX_BODY)
      return invalid("IssueComment", "body", `body is too long (maximum is ${MAX_BODY} characters)`);
    return {
      status: 201,
      body: renderComment(double, double.state.addComment(issue.number, double.state.bot, body.body, true)),
    };
  }),
  route("GET", `${REPO}/issues/comments/{comment_id}`, (double, { params }) => {
    const comment = double.state.comment(Number(params.comment_id));
    return comment ? ok(renderComment(double, comment)) : notFound;
  }),
  route("PATCH", `${REPO}/issues/comments/{comment_id}`, (double, { params, body }) => {
    const comment = double.state.comment(Number(params.comment_id));
    if (!comment) return notFound;
    if (typeof body.body !== "string") return invalid("IssueComment", "body", "body is missing");
    if (body.body.length > MAX_BODY)
      return invalid("IssueComment", "body", `body is too long (maximum is ${MAX_BODY} characters)`);
    comment.body = body.body;
    comment.updatedAt = new Date().toISOString();
    comment.history.push(body.body);
    return ok(renderComment(double, comment));
  }),
  route("POST", `${REPO}/issues/comments/{comment_id}/reactions`, (double, { params, body }) => {
    const comment = double.state.comment(Number(params.comment_id));
    if (!comment) return notFound;
    if (typeof body.content !== "string") return invalid("Reaction", "content", "content is missing");
    const { reaction, created } = double.state.addReaction(comment.id, body.content, double.state.bot);
    return {
      status: created ? 201 : 200,
      body: {
        id: reaction.id,
        node_id: `REA_${reaction.id}`,
        user: renderAccount(double, reaction.user),
        content: reaction.content,
        created_at: comment.createdAt,
      },
    };
  }),
  route("GET", `${REPO}/collaborators/{username}/permission`, (double, { params }) => {
    const login = params.username ?? "";
    const role = double.state.roleOf(login);
    // `permission` keeps GitHub's legacy levels; the exact role is in `role_name`.
    const legacy = role === "maintain" ? "write" : role === "triage" ? "read" : role;
    return ok({ permission: legacy, role_name: role, user: renderAccount(double, { login, type: "User" }) });
  }),
  route("GET", `${REPO}/pulls`, (double, request) => {
    const state = request.query.get("state") ?? "open";
    const head = request.query.get("head");
    const base = request.query.get("base");
    const pulls = double.state.pulls.filter(
      (pull) =>
        (state === "all" || pull.state === state) &&
        (!head || head === `${double.repository.owner}:${pull.head}`) &&
        (!base || base === pull.base),
    );
    return paginate(
      double,
      request,
      [...pulls].reverse().map((pull) => renderPull(double, pull)),
    );
  }),
  route("POST", `${REPO}/pulls`, (double, { body }) => {
    const { head, base, title } = body;
    if (typeof head !== "string" || typeof base !== "string")
      return invalid("PullRequest", "head", "head and base are required");
    if (typeof title !== "string" || title.trim() === "") return invalid("PullRequest", "title", "title is required");
    if (!double.repository.head(head)) return invalid("PullRequest", "head", `head branch ${head} does not exist`);
    if (!double.repository.head(base)) return invalid("PullRequest", "base", `base branch ${base} does not exist`);
    if (double.repository.commitsAhead(base, head) === 0)
      return invalid("PullRequest", "head", `No commits between ${base} and ${head}`);
    if (double.state.pulls.some((pull) => pull.state === "open" && pull.head === head && pull.base === base)) {
      return invalid("PullRequest", "head", `A pull request already exists for ${double.repository.owner}:${head}.`);
    }
    const text = typeof body.body === "string" ? body.body : "";
    if (text.length > MAX_BODY)
      return invalid("PullRequest", "body", `body is too long (maximum is ${MAX_BODY} characters)`);
    const pull = double.state.addPull({
      head,
      base,
      title,
      body: text,
      draft: body.draft === true,
      user: double.state.bot,
    });
    return { status: 201, body: renderPull(double, pull) };
  }),
  route("GET", `${REPO}/pulls/{pull_number}`, (double, { params }) => {
    const pull = double.state.pulls.find((candidate) => candidate.number === Number(params.pull_number));
    return pull ? ok(renderPull(double, pull)) : notFound;
  }),
  route("PATCH", `${REPO}/pulls/{pull_number}`, (double, { params, body }) => {
    const pull = double.state.pulls.find((candidate) => candidate.number === Number(params.pull_number));
    if (!pull) return notFound;
    if (typeof body.body === "string" && body.body.length > MAX_BODY)
      return invalid("PullRequest", "body", `body is too long (maximum is ${MAX_BODY} characters)`);
    if (typeof body.title === "string") pull.title = body.title;
    if (typeof body.body === "string") pull.body = body.body;
    if (body.state === "open" || body.state === "closed") pull.state = body.state;
    if (typeof body.base === "string") pull.base = body.base;
    pull.updatedAt = new Date().toISOString();
    return ok(renderPull(double, pull));
  }),
  needs(
    ["checks", "write"],
    route("POST", `${REPO}/check-runs`, (double, { body }) => {
      if (typeof body.name !== "string" || body.name === "") return invalid("CheckRun", "name", "name is missing");
      if (typeof body.head_sha !== "string" || !double.repository.commitOf(body.head_sha))
        return invalid("CheckRun", "head_sha", "No commit found for SHA");
      const problem = checkRunProblem(body);
      if (problem) return invalid("CheckRun", problem.field, problem.message);
      const output = objectOf(body.output);
      const conclusion = typeof body.conclusion === "string" ? body.conclusion : null;
      const run = double.state.addCheckRun({
        name: body.name,
        headSha: body.head_sha,
        externalId: typeof body.external_id === "string" ? body.external_id : null,
        status: conclusion ? "completed" : ((body.status as CheckRunRecord["status"] | undefined) ?? "queued"),
        conclusion,
        title: typeof output.title === "string" ? output.title : null,
        summary: typeof output.summary === "string" ? output.summary : null,
        text: typeof output.text === "string" ? output.text : null,
        annotations: (output.annotations as CheckRunRecord["annotations"] | undefined) ?? [],
        actions: (body.actions as CheckRunRecord["actions"] | undefined) ?? [],
        app: { id: double.appId, slug: double.appSlug },
        completedAt: conclusion ? new Date().toISOString() : null,
      });
      return { status: 201, body: renderCheckRun(double, run) };
    }),
  ),
  needs(
    ["checks", "write"],
    route("PATCH", `${REPO}/check-runs/{check_run_id}`, (double, { params, body }) => {
      const run = double.state.checkRuns.find((candidate) => candidate.id === Number(params.check_run_id));
      if (!run) return notFound;
      // An app may only change its own check runs.
      if (run.app.id !== double.appId)
        return {
          status: 403,
          body: {
            message:
              "Invalid app_id `" +
              double.appId +
              "` - check run can only be modified by the GitHub App that created it.",
          },
        };
      const problem = checkRunProblem(body);
      if (problem) return invalid("CheckRun", problem.field, problem.message);
      const output = objectOf(body.output);
      if (typeof body.conclusion === "string") {
        run.conclusion = body.conclusion;
        run.status = "completed";
        run.completedAt = new Date().toISOString();
      } else if (typeof body.status === "string") run.status = body.status as CheckRunRecord["status"];
      if (typeof output.title === "string") run.title = output.title;
      if (typeof output.summary === "string") run.summary = output.summary;
      if (typeof output.text === "string") run.text = output.text;
      run.annotations.push(...((output.annotations as CheckRunRecord["annotations"] | undefined) ?? []));
      if (Array.isArray(body.actions)) run.actions = body.actions as CheckRunRecord["actions"];
      run.history.push(`${run.status}/${run.conclusion ?? "-"}`);
      return ok(renderCheckRun(double, run));
    }),
  ),
  route("GET", `${REPO}/check-runs/{check_run_id}`, (double, { params }) => {
    const run = double.state.checkRuns.find((candidate) => candidate.id === Number(params.check_run_id));
    return run ? ok(renderCheckRun(double, run)) : notFound;
  }),
  route("GET", `${REPO}/check-runs/{check_run_id}/annotations`, (double, request) => {
    const run = double.state.checkRuns.find((candidate) => candidate.id === Number(request.params.check_run_id));
    if (!run) return notFound;
    const fullName = repoPath(double);
    return paginate(
      double,
      request,
      run.annotations.map((note) => ({
        ...note,
        title: note.title ?? null,
        blob_href: `${double.webUrl}/${fullName}/blob/${run.headSha}/${note.path}`,
        start_column: null,
        end_column: null,
        raw_details: null,
      })),
    );
  }),
  route("GET", `${REPO}/commits/{ref}/check-runs`, (double, request) => {
    const sha = double.repository.commitOf(request.params.ref ?? "");
    if (!sha) return invalid("CheckRun", "ref", "No commit found for ref");
    const name = request.query.get("check_name");
    const runs = double.state.checkRuns.filter((run) => run.headSha === sha && (!name || run.name === name));
    // `filter=latest` (the default): the newest run of each name only.
    const latest =
      (request.query.get("filter") ?? "latest") === "latest"
        ? runs.filter((run) => !runs.some((other) => other.name === run.name && other.id > run.id))
        : runs;
    const page = paginate(
      double,
      request,
      [...latest].reverse().map((run) => renderCheckRun(double, run)),
    );
    return { ...page, body: { total_count: latest.length, check_runs: page.body } };
  }),
  route("GET", `${REPO}/pulls/{pull_number}/reviews/{review_id}/comments`, (double, request) => {
    const comments = double.state.reviewComments.filter(
      (comment) =>
        comment.pullNumber === Number(request.params.pull_number) &&
        comment.reviewId === Number(request.params.review_id),
    );
    return paginate(
      double,
      request,
      comments.map((comment) => ({
        id: comment.id,
        path: comment.path,
        line: comment.line,
        original_line: comment.line,
        body: comment.body,
        user: renderAccount(double, comment.user),
      })),
    );
  }),
  ...LABEL_AND_BRANCH_ROUTES,
];

/** The route for a method and path below `/api/v3`, with its path parameters; null when the double has none. */
export function findRestRoute(
  method: string,
  pathname: string,
): { route: RestRoute; params: Record<string, string> } | null {
  for (const candidate of REST_ROUTES) {
    if (candidate.method !== method.toUpperCase()) continue;
    const { pattern, names } = compiledTemplate(candidate.template);
    const match = pattern.exec(pathname);
    if (!match) continue;
    return {
      route: candidate,
      params: Object.fromEntries(names.map((name, index) => [name, decodeURIComponent(match[index + 1] ?? "")])),
    };
  }
  return null;
}

const compiled = new Map<string, { pattern: RegExp; names: string[] }>();
/** A route template as a pattern and its parameters' names, made once per template. */
function compiledTemplate(template: string): { pattern: RegExp; names: string[] } {
  let entry = compiled.get(template);
  if (!entry) {
    const names: string[] = [];
    const source = template.replace(/\{([^}]+)\}/g, (_, name: string) => {
      names.push(name);
      return "([^/]+)";
    });
    entry = { pattern: new RegExp(`^${source}$`), names };
    compiled.set(template, entry);
  }
  return entry;
}

function route(method: string, template: string, handle: RestRoute["handle"]): RestRoute {
  return {
    method,
    template,
    auth: "installation",
    handle: (double, request) =>
      request.params.owner === double.repository.owner && request.params.repo === double.repository.name
        ? handle(double, request)
        : notFound,
  };
}

function needs(permission: [string, "read" | "write"], served: RestRoute): RestRoute {
  return { ...served, needs: permission };
}

function ok(body: unknown): RestReply {
  return { status: 200, body };
}

/** `per_page` (default 30, at most 100) and `page`, with a Link header as GitHub sends it. */
function paginate(double: DoubleContext, request: RestRequest, items: unknown[]): RestReply {
  const perPage = Math.min(100, Math.max(1, Number(request.query.get("per_page") ?? 30) || 30));
  const page = Math.max(1, Number(request.query.get("page") ?? 1) || 1);
  const last = Math.max(1, Math.ceil(items.length / perPage));
  const link = (to: number) => {
    const query = new URLSearchParams(request.query);
    query.set("page", String(to));
    return `<${double.apiUrl}${request.pathname}?${query}>`;
  };
  const links: string[] = [];
  if (page < last) links.push(`${link(page + 1)}; rel="next"`, `${link(last)}; rel="last"`);
  if (page > 1) links.push(`${link(1)}; rel="first"`, `${link(page - 1)}; rel="prev"`);
  return {
    status: 200,
    body: items.slice((page - 1) * perPage, page * perPage),
    headers: links.length > 0 ? { link: links.join(", ") } : {},
  };
}

function objectOf(value: unknown): Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

/**
 * What GitHub refuses in a check run's create or update beyond its schema: a completed run without a conclusion, too
 * many annotations, buttons past their limits.
 */
function checkRunProblem(body: Record<string, unknown>): { field: string; message: string } | null {
  if (body.status === "completed" && typeof body.conclusion !== "string")
    return { field: "conclusion", message: "conclusion is required when status is completed" };
  const annotations = objectOf(body.output).annotations;
  if (Array.isArray(annotations) && annotations.length > ANNOTATIONS_PER_REQUEST)
    return { field: "annotations", message: `at most ${ANNOTATIONS_PER_REQUEST} annotations per request` };
  if (Array.isArray(body.actions)) {
    if (body.actions.length > ACTION_LIMITS.count)
      return { field: "actions", message: `at most ${ACTION_LIMITS.count} actions` };
    for (const action of body.actions.map(objectOf)) {
      for (const field of ["label", "identifier", "description"] as const) {
        const value = action[field];
        if (typeof value !== "string" || value.length === 0 || value.length > ACTION_LIMITS[field])
          return { field: `actions.${field}`, message: `${field} must be 1–${ACTION_LIMITS[field]} characters` };
      }
    }
  }
  return null;
}

function renderCheckRun(double: DoubleContext, run: CheckRunRecord) {
  const fullName = repoPath(double);
  return {
    id: run.id,
    node_id: `CR_kwDO${run.id}`,
    head_sha: run.headSha,
    external_id: run.externalId,
    name: run.name,
    status: run.status,
    conclusion: run.conclusion,
    started_at: run.startedAt,
    completed_at: run.completedAt,
    url: `${double.apiUrl}/repos/${fullName}/check-runs/${run.id}`,
    html_url: `${double.webUrl}/${fullName}/runs/${run.id}`,
    details_url: `${double.webUrl}/apps/${run.app.slug}`,
    output: {
      title: run.title,
      summary: run.summary,
      text: run.text,
      annotations_count: run.annotations.length,
      annotations_url: `${double.apiUrl}/repos/${fullName}/check-runs/${run.id}/annotations`,
    },
    check_suite: { id: run.id + 500_000 },
    app: { id: run.app.id, slug: run.app.slug, node_id: `A_${run.app.id}`, name: run.app.slug, owner: null },
    pull_requests: [],
  };
}

export function renderAccount(double: Pick<DoubleContext, "apiUrl" | "webUrl">, account: Account) {
  return {
    login: account.login,
    id: [...account.login].reduce((sum, char) => sum * 31 + char.charCodeAt(0), 7) % 1_000_000,
    type: account.type,
    site_admin: false,
    url: `${double.apiUrl}/users/${encodeURIComponent(account.login)}`,
    html_url: `${double.webUrl}/${encodeURIComponent(account.login)}`,
  };
}

function repoPath(double: DoubleContext): string {
  return `${double.repository.owner}/${double.repository.name}`;
}

function renderIssue(double: DoubleContext, issue: IssueRecord) {
  const apiBase = `${double.apiUrl}/repos/${repoPath(double)}`;
  return {
    id: issue.number * 1000 + 7,
    node_id: `I_kwDO${issue.number}`,
    number: issue.number,
    title: issue.title,
    body: issue.body,
    user: renderAccount(double, issue.user),
    state: issue.state,
    locked: false,
    labels: issueLabels(double, issue),
    comments: double.state.commentsOn(issue.number).length,
    url: `${apiBase}/issues/${issue.number}`,
    html_url: `${double.webUrl}/${repoPath(double)}/${issue.isPullRequest ? "pull" : "issues"}/${issue.number}`,
    created_at: issue.createdAt,
    updated_at: issue.updatedAt,
    author_association: double.state.roleOf(issue.user.login) === "none" ? "NONE" : "COLLABORATOR",
    ...(issue.isPullRequest
      ? {
          pull_request: {
            url: `${apiBase}/pulls/${issue.number}`,
            html_url: `${double.webUrl}/${repoPath(double)}/pull/${issue.number}`,
          },
        }
      : {}),
  };
}

function renderRepository(double: DoubleContext) {
  const fullName = repoPath(double);
  return {
    id: 1296269,
    node_id: "R_kgDOdouble",
    name: double.repository.name,
    full_name: fullName,
    owner: renderAccount(double, { login: double.repository.owner, type: "User" }),
    private: true,
    html_url: `${double.webUrl}/${fullName}`,
    url: `${double.apiUrl}/repos/${fullName}`,
    clone_url: `${double.webUrl}/${fullName}.git`,
    default_branch: double.repository.defaultBranch,
    ...(double.state.deleteBranchOnMerge === undefined
      ? {}
      : { delete_branch_on_merge: double.state.deleteBranchOnMerge }),
  };
}

function renderLabel(double: DoubleContext, label: LabelRecord) {
  return {
    id: label.id,
    node_id: `LA_kwDO${label.id}`,
    url: `${double.apiUrl}/repos/${repoPath(double)}/labels/${encodeURIComponent(label.name)}`,
    name: label.name,
    color: label.color,
    description: label.description,
    default: false,
  };
}

function issueLabels(double: DoubleContext, issue: IssueRecord) {
  return issue.labels.flatMap((name) => {
    const label = double.state.label(name);
    return label ? [renderLabel(double, label)] : [];
  });
}

function renderComment(double: DoubleContext, comment: CommentRecord) {
  return {
    id: comment.id,
    node_id: comment.nodeId,
    url: `${double.apiUrl}/repos/${repoPath(double)}/issues/comments/${comment.id}`,
    html_url: `${double.webUrl}/${repoPath(double)}/issues/${comment.issueNumber}#issuecomment-${comment.id}`,
    issue_url: `${double.apiUrl}/repos/${repoPath(double)}/issues/${comment.issueNumber}`,
    body: comment.body,
    user: renderAccount(double, comment.user),
    created_at: comment.createdAt,
    updated_at: comment.updatedAt,
    author_association: comment.viaApp
      ? "NONE"
      : double.state.roleOf(comment.user.login) === "none"
        ? "NONE"
        : "COLLABORATOR",
    performed_via_github_app: comment.viaApp
      ? { id: double.appId, slug: double.appSlug, name: double.appSlug, node_id: `A_${double.appId}` }
      : null,
  };
}

function renderPull(double: DoubleContext, pull: PullRecord) {
  const fullName = repoPath(double);
  const repo = {
    name: double.repository.name,
    full_name: fullName,
    owner: renderAccount(double, { login: double.repository.owner, type: "User" }),
  };
  const side = (ref: string) => ({
    label: `${double.repository.owner}:${ref}`,
    ref,
    sha: double.repository.head(ref) ?? "",
    repo,
  });
  return {
    id: pull.number * 1000 + 9,
    node_id: `PR_kwDO${pull.number}`,
    number: pull.number,
    state: pull.state,
    title: pull.title,
    body: pull.body,
    draft: pull.draft,
    merged: pull.merged,
    user: renderAccount(double, pull.user),
    head: side(pull.head),
    base: side(pull.base),
    url: `${double.apiUrl}/repos/${fullName}/pulls/${pull.number}`,
    html_url: `${double.webUrl}/${fullName}/pull/${pull.number}`,
    created_at: pull.createdAt,
    updated_at: pull.updatedAt,
  };
}
