import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { vi } from "vitest";
import { webhookExample } from "../helpers/app.js";
import { tempDir } from "../helpers/git-repo.js";
import { ACTIONS_TOKEN, eventGiven, GHES_API_URL } from "../helpers/actions-github.js";
import { TEST_STATE_SECRET } from "../helpers/plan-state.js";

export const MODEL_KEY = "sk-test-action-model-key-0000000000000";

/** issue_comment.created from @octokit/webhooks-examples, edited to carry our comment and repository. */
export function commentEvent(options: {
  body: string;
  cloneUrl: string;
  login?: string;
  userType?: string;
  action?: string;
  commentId?: number;
}) {
  const payload = webhookExample(
    "issue_comment",
    (e) => e.action === "created" && !(e.issue as { pull_request?: unknown }).pull_request,
  );
  const login = options.login ?? "maintainer";
  payload.action = options.action ?? "created";
  payload.comment.id = options.commentId ?? 4242;
  payload.comment.body = options.body;
  payload.comment.user = { ...payload.comment.user, login, type: options.userType ?? "User" };
  payload.sender = { ...payload.sender, login, type: options.userType ?? "User" };
  payload.repository.clone_url = options.cloneUrl;
  payload.repository.html_url = "https://ghes.example.test/Codertocat/Hello-World";
  payload.repository.default_branch = "main";
  return payload;
}

export interface StepFiles {
  dir: string;
  env: NodeJS.ProcessEnv;
  /** The step's outputs, parsed from the GITHUB_OUTPUT file. */
  outputs(): Record<string, string>;
  summary(): string;
}

/**
 * The files and variables a runner gives one step: the event file, GITHUB_OUTPUT and GITHUB_STEP_SUMMARY
 * (stubbed in process.env too, where @actions/core reads them), and the Action's inputs.
 */
export function stepFiles(
  eventName: string,
  event: unknown,
  inputs: Record<string, string>,
  extraEnv: Record<string, string> = {},
): StepFiles {
  const dir = tempDir("blueprint-action-");
  const eventPath = path.join(dir, "event.json");
  const outputPath = path.join(dir, "github_output");
  const summaryPath = path.join(dir, "step_summary.md");
  writeFileSync(eventPath, JSON.stringify(event));
  eventGiven(eventName, event);
  writeFileSync(outputPath, "");
  writeFileSync(summaryPath, "");
  vi.stubEnv("GITHUB_OUTPUT", outputPath);
  vi.stubEnv("GITHUB_STEP_SUMMARY", summaryPath);
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH ?? "",
    GITHUB_EVENT_NAME: eventName,
    GITHUB_EVENT_PATH: eventPath,
    GITHUB_API_URL: GHES_API_URL,
    GITHUB_RUN_ID: "9001",
    GITHUB_OUTPUT: outputPath,
    GITHUB_STEP_SUMMARY: summaryPath,
    RUNNER_TEMP: dir,
    "INPUT_GITHUB-TOKEN": ACTIONS_TOKEN,
    "INPUT_OPENAI-API-KEY": MODEL_KEY,
    "INPUT_MIN-PERMISSION": "write",
    "INPUT_STATE-SECRET": TEST_STATE_SECRET,
    BLUEPRINT_MODEL_RETRIES: "0",
    BLUEPRINT_PROGRESS_INTERVAL_MS: "0",
    ...Object.fromEntries(Object.entries(inputs).map(([name, value]) => [`INPUT_${name.toUpperCase()}`, value])),
    ...extraEnv,
  };
  return {
    dir,
    env,
    outputs: () => parseOutputFile(readFileSync(outputPath, "utf8")),
    summary: () => readFileSync(summaryPath, "utf8"),
  };
}

/** `name<<DELIMITER\nvalue\nDELIMITER`, as @actions/core writes it. */
export function parseOutputFile(text: string): Record<string, string> {
  const outputs: Record<string, string> = {};
  const pattern = /^([^\n<]+)<<(\S+)\n([\s\S]*?)\n\2$/gm;
  for (const match of text.matchAll(pattern)) outputs[match[1] ?? ""] = match[3] ?? "";
  return outputs;
}

/**
 * pull_request_review.submitted from @octokit/webhooks-examples, edited to an approval (or another state) by `login`.
 */
export function reviewEvent(options: { cloneUrl: string; state: string; login?: string; action?: string }) {
  const payload = webhookExample("pull_request_review", (e) => e.action === "submitted");
  const login = options.login ?? "maintainer";
  payload.action = options.action ?? "submitted";
  payload.review.state = options.state;
  payload.review.submitted_at = new Date().toISOString();
  payload.review.user = { ...payload.review.user, login, type: "User" };
  payload.sender = { ...payload.sender, login, type: "User" };
  payload.repository.clone_url = options.cloneUrl;
  payload.repository.html_url = "https://ghes.example.test/Codertocat/Hello-World";
  payload.repository.default_branch = "main";
  return payload;
}

/**
 * workflow_run.completed from @octokit/webhooks-examples (the one on a pull request), edited to a run of `name` on
 * `headSha` of `headBranch`, the head of pull request `pullRequest` of our repository.
 */
export function workflowRunEvent(options: {
  cloneUrl: string;
  headSha: string;
  headBranch: string;
  pullRequest: number;
  conclusion?: string;
  name?: string;
  path?: string;
}) {
  const payload = webhookExample(
    "workflow_run",
    (e) => e.action === "completed" && (e.workflow_run as { pull_requests: unknown[] }).pull_requests.length === 1,
  );
  const run = payload.workflow_run;
  const pull = run.pull_requests[0];
  payload.workflow_run = {
    ...run,
    name: options.name ?? "CI",
    path: options.path ?? ".github/workflows/ci.yml",
    conclusion: options.conclusion ?? "failure",
    head_sha: options.headSha,
    head_branch: options.headBranch,
    pull_requests: [
      { ...pull, number: options.pullRequest, head: { ...pull.head, ref: options.headBranch, sha: options.headSha } },
    ],
  };
  payload.repository = {
    ...payload.repository,
    name: "Hello-World",
    full_name: "Codertocat/Hello-World",
    owner: { ...payload.repository.owner, login: "Codertocat" },
    clone_url: options.cloneUrl,
    html_url: "https://github.com/Codertocat/Hello-World",
    default_branch: "main",
  };
  return payload;
}
