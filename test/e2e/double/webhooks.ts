import { createHmac, randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import type { GitHubDouble } from "./github-server.js";
import { renderAccount } from "./rest-routes.js";
import type { CommentRecord, PullRecord } from "./state.js";

export interface WebhookEvent {
  /** The `X-GitHub-Event` name, e.g. `issue_comment`. */
  name: string;
  payload: Record<string, unknown>;
}

type Json = Record<string, unknown>;
type Example = Json & { action: string };
const require = createRequire(import.meta.url);
/** The GitHub Enterprise Server examples: their URLs already carry `/api/v3`. */
const EXAMPLES_HOST = "https://octocoders.github.io";
let examples: Array<{ name: string; examples: Example[] }> | null = null;

function example(name: string, pick: (candidate: Example) => boolean): Example {
  examples ??= JSON.parse(
    readFileSync(
      path.join(path.dirname(require.resolve("@octokit/webhooks-examples/package.json")), "ghes-35", "index.json"),
      "utf8",
    ),
  ) as Array<{ name: string; examples: Example[] }>;
  const found = examples.find((entry) => entry.name === name)?.examples.find(pick);
  if (!found) throw new Error(`@octokit/webhooks-examples has no ${name} example to start from`);
  return structuredClone(found);
}

/**
 * `issue_comment.created` for a comment the double already holds, as GitHub would send it:
 * a real example payload re-pointed at the double's host, repository, issue and installation.
 */
export function issueCommentCreated(double: GitHubDouble, comment: CommentRecord): WebhookEvent {
  const issue = double.state.issues.get(comment.issueNumber);
  if (!issue) throw new Error(`the double has no issue #${comment.issueNumber}`);
  const payload = repoint(
    double,
    example("issue_comment", (candidate) => candidate.action === "created"),
  );
  const fullName = `${double.repository.owner}/${double.repository.name}`;
  const account = (user: CommentRecord["user"]) => ({
    ...object(payload.sender),
    ...renderAccount({ apiUrl: double.apiUrl, webUrl: double.url }, user),
  });
  const issueJson: Json = {
    ...object(payload.issue),
    number: issue.number,
    title: issue.title,
    body: issue.body,
    user: account(issue.user),
    state: issue.state,
    url: `${double.apiUrl}/repos/${fullName}/issues/${issue.number}`,
    html_url: `${double.htmlUrl}/${issue.isPullRequest ? "pull" : "issues"}/${issue.number}`,
  };
  if (issue.isPullRequest)
    issueJson.pull_request = {
      url: `${double.apiUrl}/repos/${fullName}/pulls/${issue.number}`,
      html_url: `${double.htmlUrl}/pull/${issue.number}`,
    };
  else delete issueJson.pull_request;
  payload.issue = issueJson;
  payload.comment = {
    ...object(payload.comment),
    id: comment.id,
    node_id: comment.nodeId,
    body: comment.body,
    user: account(comment.user),
    created_at: comment.createdAt,
    updated_at: comment.updatedAt,
    url: `${double.apiUrl}/repos/${fullName}/issues/comments/${comment.id}`,
    html_url: `${double.htmlUrl}/issues/${issue.number}#issuecomment-${comment.id}`,
    issue_url: `${double.apiUrl}/repos/${fullName}/issues/${issue.number}`,
    performed_via_github_app: comment.viaApp ? { id: double.appId, slug: double.appSlug } : null,
  };
  payload.sender = account(comment.user);
  return { name: "issue_comment", payload };
}

/**
 * `pull_request.closed` for a pull request the double holds, merged or not, closed by `sender`: the
 * double's pull request is closed (and marked merged) first, as GitHub does before it sends the event.
 */
export function pullRequestClosed(
  double: GitHubDouble,
  pull: PullRecord,
  options: { merged: boolean; sender: string },
): WebhookEvent {
  const payload = repoint(
    double,
    example("pull_request", (candidate) => candidate.action === "closed"),
  );
  pull.state = "closed";
  pull.merged = options.merged;
  const web = { apiUrl: double.apiUrl, webUrl: double.url };
  const fullName = `${double.repository.owner}/${double.repository.name}`;
  const side = (ref: string) => ({
    ...object(object(payload.pull_request).head),
    label: `${double.repository.owner}:${ref}`,
    ref,
    sha: double.repository.head(ref) ?? "",
    repo: payload.repository,
    user: renderAccount(web, { login: double.repository.owner, type: "User" }),
  });
  const now = new Date().toISOString();
  payload.number = pull.number;
  payload.pull_request = {
    ...object(payload.pull_request),
    number: pull.number,
    state: "closed",
    title: pull.title,
    body: pull.body,
    draft: pull.draft,
    merged: options.merged,
    merged_at: options.merged ? now : null,
    closed_at: now,
    user: renderAccount(web, pull.user),
    head: side(pull.head),
    base: side(pull.base),
    url: `${double.apiUrl}/repos/${fullName}/pulls/${pull.number}`,
    html_url: `${double.htmlUrl}/pull/${pull.number}`,
  };
  payload.sender = { ...object(payload.sender), ...renderAccount(web, { login: options.sender, type: "User" }) };
  return { name: "pull_request", payload };
}

/**
 * `check_suite.completed` for `app`'s suite on the head of a pull request the double holds, concluded `conclusion`:
 * another CI than GitHub Actions (whose suites GitHub sends to no workflow).
 */
export function checkSuiteCompleted(
  double: GitHubDouble,
  pull: PullRecord,
  options: { app: { id: number; slug: string }; conclusion: string },
): WebhookEvent {
  const payload = repoint(
    double,
    example("check_suite", (candidate) => candidate.action === "completed"),
  );
  const suite = object(payload.check_suite);
  const [example0] = (suite.pull_requests as Json[] | undefined) ?? [];
  const fullName = `${double.repository.owner}/${double.repository.name}`;
  const sha = double.repository.head(pull.head) ?? "";
  const side = (ref: string) => ({
    ...object(object(example0).head),
    ref,
    sha: double.repository.head(ref) ?? "",
  });
  payload.check_suite = {
    ...suite,
    head_branch: pull.head,
    head_sha: sha,
    status: "completed",
    conclusion: options.conclusion,
    app: { ...object(suite.app), id: options.app.id, slug: options.app.slug, name: options.app.slug },
    pull_requests: [
      {
        ...object(example0),
        url: `${double.apiUrl}/repos/${fullName}/pulls/${pull.number}`,
        number: pull.number,
        head: side(pull.head),
        base: side(pull.base),
      },
    ],
  };
  return { name: "check_suite", payload };
}

/** Points an example's repository, URLs and installation at the double. */
function repoint(double: GitHubDouble, original: Example): Example {
  const fullName = `${double.repository.owner}/${double.repository.name}`;
  const text = JSON.stringify(original)
    .replaceAll(EXAMPLES_HOST, double.url)
    .replaceAll("Codertocat/Hello-World", fullName);
  const payload = JSON.parse(text) as Example;
  const repository = object(payload.repository);
  payload.repository = {
    ...repository,
    name: double.repository.name,
    full_name: fullName,
    owner: {
      ...object(repository.owner),
      login: double.repository.owner,
      url: `${double.apiUrl}/users/${double.repository.owner}`,
      html_url: `${double.url}/${double.repository.owner}`,
    },
    private: true,
    html_url: double.htmlUrl,
    url: `${double.apiUrl}/repos/${fullName}`,
    clone_url: double.cloneUrl,
    git_url: `git://${double.host}/${fullName}.git`,
    ssh_url: `git@${double.host}:${fullName}.git`,
    svn_url: double.htmlUrl,
    default_branch: double.repository.defaultBranch,
  };
  payload.installation = {
    id: double.installationId,
    node_id: `MDIzOkludGVncmF0aW9uSW5zdGFsbGF0aW9u${double.installationId}`,
  };
  return payload;
}

function object(value: unknown): Json {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Json) : {};
}

/** `sha256=<hex HMAC of the exact body>`, the `X-Hub-Signature-256` header. */
export function signWebhook(secret: string, body: string): string {
  return `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;
}

/** POSTs a webhook the way GitHub delivers it: JSON body, event and delivery headers, real signature. */
export async function deliverWebhook(
  url: string,
  secret: string,
  event: WebhookEvent,
  deliveryId: string = randomUUID(),
): Promise<{ status: number; body: string; deliveryId: string }> {
  const body = JSON.stringify(event.payload);
  const response = await fetch(url, {
    method: "POST",
    headers: webhookHeaders(event.name, deliveryId, signWebhook(secret, body)),
    body,
  });
  return { status: response.status, body: await response.text(), deliveryId };
}

/** The headers GitHub sends with a delivery (the body's length aside). */
export function webhookHeaders(event: string, deliveryId: string, signature: string): Record<string, string> {
  return {
    "content-type": "application/json",
    "user-agent": "GitHub-Hookshot/e2e",
    "x-github-event": event,
    "x-github-delivery": deliveryId,
    "x-github-hook-installation-target-type": "integration",
    "x-hub-signature-256": signature,
  };
}
