import { generateKeyPairSync } from "node:crypto";
import path from "node:path";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { Probot, ProbotOctokit, type ApplicationFunctionOptions } from "probot";
import { z } from "zod";
import { createBlueprintApp, type BlueprintApp } from "../../src/index.js";
import { loadEnv } from "../../src/config/env.js";
import type { WorkflowDeps } from "../../src/workflow/deps.js";
import { APP_ID, INSTALLATION_ID, recordDelivered } from "./github-double.js";
import { realPause, TEST_LIMIT_MS } from "./patience.js";
import { TEST_STATE_SECRET } from "./plan-state.js";
import { tempDir } from "./git-repo.js";

let privateKey: string | null = null;
/** A throwaway RSA key made at test time: Probot signs its app JWT with it; nothing is committed. */
export function testPrivateKey(): string {
  privateKey ??= generateKeyPairSync("rsa", { modulusLength: 2048 })
    .privateKey.export({ type: "pkcs1", format: "pem" })
    .toString();
  return privateKey;
}

export interface TestApp {
  probot: Probot;
  blueprint: BlueprintApp;
  handlers: Parameters<ApplicationFunctionOptions["addHandler"]>[0][];
  workdir: string;
  /** Delivers a webhook like GitHub would and waits until every job it started is done. */
  deliver(name: string, payload: unknown, id?: string): Promise<void>;
}

/**
 * `githubRetries: true` keeps Octokit's retry and throttling on, as in production.
 * `deps` replaces parts of the engine (e.g. a command runner that records what it was asked).
 * `baseUrl`: the REST API to use (a test/e2e/double server) instead of api.github.com.
 */
export async function startTestApp(
  env: Record<string, string> = {},
  options: { githubRetries?: boolean; deps?: Partial<WorkflowDeps>; baseUrl?: string } = {},
): Promise<TestApp> {
  const workdir = tempDir("blueprint-workdir-");
  const probot = new Probot({
    // Another GitHub than nock's api.github.com (the e2e double), when given.
    ...(options.baseUrl ? { baseUrl: options.baseUrl } : {}),
    appId: APP_ID,
    privateKey: testPrivateKey(),
    secret: TEST_STATE_SECRET,
    logLevel: "fatal",
    Octokit: options.githubRetries
      ? ProbotOctokit.defaults((defaults: Record<string, unknown>) => ({
          ...defaults,
          retry: { retryAfterBaseValue: 50 },
        }))
      : ProbotOctokit.defaults((defaults: Record<string, unknown>) => ({
          ...defaults,
          retry: { enabled: false },
          throttle: { enabled: false },
        })),
  });
  const handlers: TestApp["handlers"] = [];
  const deps = options.deps;
  let blueprint: BlueprintApp | undefined;
  await probot.load(
    (app, options) => {
      blueprint = createBlueprintApp(app, options, {
        env: loadEnv({
          APP_ID: String(APP_ID),
          BLUEPRINT_WORKDIR: workdir,
          BLUEPRINT_PROGRESS_INTERVAL_MS: "0",
          // nock and the GitHub double have no rate limits: GitHub's second between writes would only slow the tests.
          BLUEPRINT_GITHUB_WRITE_GAP_MS: "0",
          BLUEPRINT_MODEL: "test-model",
          OPENAI_API_KEY: "sk-test-model-key-000000000000000000",
          BLUEPRINT_MODEL_RETRIES: "0",
          // A model request that hangs ends by what the test does (a /cancel, a shutdown, the run's deadline), never
          // by the model's own timeout: past the test's limit, it cannot end it first and pass a test that should fail.
          BLUEPRINT_MODEL_TIMEOUT_S: String((2 * TEST_LIMIT_MS) / 1000),
          // The hidden state's key (tests that seed plans sign them with the same one); a test's env may override it.
          BLUEPRINT_STATE_SECRET: TEST_STATE_SECRET,
          PATH: process.env.PATH ?? "",
          ...env,
        }),
        ...(deps ? { deps } : {}),
      });
    },
    { cwd: process.cwd(), addHandler: (handler) => handlers.push(handler) },
  );
  if (!blueprint) throw new Error("the app did not load");
  const loaded = blueprint;
  // Every delivery, however a test makes it, is heard by GitHub's double: a comment delivered exists on GitHub.
  const receive = probot.receive.bind(probot);
  probot.receive = (event) => {
    recordDelivered(event.name, event.payload);
    return receive(event);
  };
  let deliveries = 0;
  return {
    probot,
    blueprint: loaded,
    handlers,
    workdir,
    async deliver(name, payload, id = `delivery-${++deliveries}-${Date.now()}`) {
      await probot.receive({ id, name, payload } as Parameters<Probot["receive"]>[0]);
      await settle(loaded);
    },
  };
}

/** Waits for background intake work and queued jobs to finish, on the real clock (a test's fake one stays put). */
export async function settle(app: BlueprintApp): Promise<void> {
  for (let round = 0; round < 3; round++) {
    await realPause(50);
    await app.idle();
  }
}

const require = createRequire(import.meta.url);
type Example = Record<string, unknown> & { action: string };
const examples = JSON.parse(
  readFileSync(
    path.join(path.dirname(require.resolve("@octokit/webhooks-examples/package.json")), "api.github.com/index.json"),
    "utf8",
  ),
) as Array<{ name: string; examples: Example[] }>;

/** A real payload from @octokit/webhooks-examples, deep-copied for editing. */
// The examples are read field by field, each test its own fields: a type per event would be larger than the tests.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function webhookExample(name: string, pick: (example: Example) => boolean = () => true): Record<string, any> {
  const found = examples.find((entry) => entry.name === name)?.examples.find(pick);
  if (!found) throw new Error(`no webhook example for ${name}`);
  return structuredClone(found);
}

const account = z.looseObject({ login: z.string(), type: z.string() });

/**
 * What commentPayload promises of its payload (what the intake reads of it), checked as it is made; the rest of the
 * example is kept.
 */
const commentPayloadSchema = z.looseObject({
  installation: z.looseObject({ id: z.number() }),
  repository: z.looseObject({
    name: z.string(),
    owner: z.looseObject({ login: z.string() }),
    clone_url: z.string(),
    default_branch: z.string(),
    html_url: z.string(),
  }),
  issue: z.looseObject({ number: z.number() }),
  comment: z.looseObject({ id: z.number(), body: z.string(), user: account, created_at: z.string() }),
  sender: account,
});

/** issue_comment.created from the examples, edited to carry our repository, comment and installation. */
export function commentPayload(options: {
  body: string;
  login?: string;
  userType?: string;
  cloneUrl: string;
  commentId?: number;
  number?: number;
  isPullRequest?: boolean;
}) {
  const payload = webhookExample(
    "issue_comment",
    (e) => e.action === "created" && !(e.issue as { pull_request?: unknown }).pull_request,
  );
  const login = options.login ?? "maintainer";
  payload.comment.body = options.body;
  payload.comment.id = options.commentId ?? Math.floor(Math.random() * 1e9);
  // Made now: the example's date predates every plan a test makes.
  payload.comment.created_at = new Date().toISOString();
  payload.comment.user = { ...payload.comment.user, login, type: options.userType ?? "User" };
  payload.sender = { ...payload.sender, login, type: options.userType ?? "User" };
  payload.issue.number = options.number ?? 1;
  if (options.isPullRequest)
    payload.issue.pull_request = { url: "https://api.github.com/repos/Codertocat/Hello-World/pulls/1" };
  payload.repository.clone_url = options.cloneUrl;
  payload.repository.default_branch = "main";
  payload.installation = { id: INSTALLATION_ID, node_id: "MDIzOkludGVncmF0aW9uSW5zdGFsbGF0aW9uNDI=" };
  return commentPayloadSchema.parse(payload);
}

/** pull_request_review.submitted from the examples, edited to carry our repository, reviewer, verdict and body. */
export function reviewPayload(options: {
  state: string;
  commitId: string;
  login: string;
  cloneUrl: string;
  body?: string;
  submittedAt?: string;
  /** The pull request reviewed (1 unless told). */
  number?: number;
  reviewId?: number;
  userType?: string;
}) {
  const payload = webhookExample("pull_request_review", (e) => e.action === "submitted");
  payload.review.state = options.state;
  // Submitted now unless told otherwise: the fixture's date predates every plan a test makes.
  payload.review.submitted_at = options.submittedAt ?? new Date().toISOString();
  payload.review.commit_id = options.commitId;
  payload.review.body = options.body ?? null;
  payload.review.id = options.reviewId ?? Math.floor(Math.random() * 1e9);
  payload.review.user = { ...payload.review.user, login: options.login, type: options.userType ?? "User" };
  payload.sender = { ...payload.sender, login: options.login, type: options.userType ?? "User" };
  payload.pull_request.number = options.number ?? 1;
  payload.repository.clone_url = options.cloneUrl;
  payload.repository.default_branch = "main";
  payload.installation = { id: INSTALLATION_ID, node_id: "MDIzOkludGVncmF0aW9uSW5zdGFsbGF0aW9uNDI=" };
  return payload;
}

/**
 * pull_request.closed from the examples, edited into Blueprint's pull request from `headRef` (merged or not) on our
 * repository.
 */
export function closedPullPayload(options: {
  number: number;
  headRef: string;
  headSha: string;
  merged: boolean;
  cloneUrl: string;
  login?: string;
  author?: { login: string; type: string };
}) {
  const payload = webhookExample("pull_request", (e) => e.action === "closed");
  const login = options.login ?? "maintainer";
  payload.number = options.number;
  payload.pull_request.number = options.number;
  payload.pull_request.merged = options.merged;
  payload.pull_request.merged_at = options.merged ? new Date().toISOString() : null;
  payload.pull_request.user = {
    ...payload.pull_request.user,
    ...(options.author ?? { login: "blueprint[bot]", type: "Bot" }),
  };
  payload.pull_request.head = {
    ...payload.pull_request.head,
    ref: options.headRef,
    sha: options.headSha,
    label: `Codertocat:${options.headRef}`,
  };
  payload.sender = { ...payload.sender, login, type: "User" };
  payload.repository.clone_url = options.cloneUrl;
  payload.repository.default_branch = "main";
  payload.installation = { id: INSTALLATION_ID, node_id: "MDIzOkludGVncmF0aW9uSW5zdGFsbGF0aW9uNDI=" };
  return payload;
}

/**
 * check_run.requested_action from the examples, edited: a click by `login` on the button `identifier`
 * of a check run (its id, name, external id, head commit and app), in our repository and installation.
 */
export function checkActionPayload(options: {
  identifier: string;
  login: string;
  userType?: string;
  cloneUrl: string;
  check: { id: number; name: string; externalId: string | null; headSha: string; app: { id: number; slug: string } };
}) {
  const payload = webhookExample("check_run", (e) => e.action === "requested_action");
  payload.requested_action = { identifier: options.identifier };
  payload.check_run = {
    ...payload.check_run,
    id: options.check.id,
    name: options.check.name,
    external_id: options.check.externalId,
    head_sha: options.check.headSha,
    app: { ...payload.check_run.app, id: options.check.app.id, slug: options.check.app.slug },
  };
  payload.sender = { ...payload.sender, login: options.login, type: options.userType ?? "User" };
  // The example's repository is another one: the same repository as the comment payloads'.
  payload.repository = {
    ...webhookExample("issue_comment", (e) => e.action === "created").repository,
    clone_url: options.cloneUrl,
    default_branch: "main",
  };
  payload.installation = { id: INSTALLATION_ID, node_id: "MDIzOkludGVncmF0aW9uSW5zdGFsbGF0aW9uNDI=" };
  return payload;
}

/**
 * check_suite.completed from the examples, edited: `app`'s suite on `headSha` of branch `headBranch`, for pull request
 * `pullRequest`, completed with `conclusion`, in our repository and installation.
 */
export function checkSuitePayload(options: {
  headSha: string;
  headBranch: string;
  pullRequest: number;
  conclusion?: string;
  app?: { id: number; slug: string };
  suiteId?: number;
  cloneUrl: string;
}) {
  const payload = webhookExample("check_suite", (e) => e.action === "completed");
  const pull = payload.check_suite.pull_requests[0];
  payload.check_suite = {
    ...payload.check_suite,
    id: options.suiteId ?? Math.floor(Math.random() * 1e9),
    head_sha: options.headSha,
    head_branch: options.headBranch,
    conclusion: options.conclusion ?? "failure",
    app: { ...payload.check_suite.app, ...(options.app ?? { id: 15368, slug: "github-actions" }) },
    pull_requests: [
      { ...pull, number: options.pullRequest, head: { ...pull.head, ref: options.headBranch, sha: options.headSha } },
    ],
  };
  payload.repository.clone_url = options.cloneUrl;
  payload.repository.default_branch = "main";
  payload.installation = { id: INSTALLATION_ID, node_id: "MDIzOkludGVncmF0aW9uSW5zdGFsbGF0aW9uNDI=" };
  return payload;
}
