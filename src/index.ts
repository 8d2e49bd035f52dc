import type { ApplicationFunctionOptions, Probot, ProbotOctokit } from "probot";
import { loadEnv, type BlueprintEnv } from "./config/env.js";
import { createOctokitPort } from "./github/octokit-port.js";
import { installationOctokit } from "./github/installation-octokit.js";
import { RecentKeys } from "./jobs/dedupe.js";
import { JobQueue } from "./jobs/queue.js";
import { createWorkflowDeps } from "./workflow/create-deps.js";
import type { WorkflowDeps } from "./workflow/deps.js";
import { Intake } from "./workflow/intake.js";
import type { RepositoryInfo } from "./workflow/ports.js";

export interface BlueprintApp {
  queue: JobQueue;
  /** Resolves when no webhook is being handled and no job runs (tests, graceful shutdown). */
  idle(): Promise<void>;
  /** Stops running jobs at their next safe point and waits for them (at most `timeoutMs`). */
  shutdown(timeoutMs: number): Promise<void>;
}

interface PayloadRepository {
  name: string;
  owner: { login: string };
  clone_url: string;
  default_branch: string;
  html_url: string;
}

/** The Probot app: maps webhook events to use cases. Wiring only. */
export default function blueprint(app: Probot, options: ApplicationFunctionOptions): void {
  const { shutdown } = createBlueprintApp(app, options);
  // Graceful shutdown: running jobs stop at a safe point and leave their state resumable.
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    process.once(signal, () => {
      app.log.info({ signal }, "stopping: asking running jobs to stop at a safe point");
      void shutdown(25_000).finally(() => process.exit(0));
    });
  }
}

export function createBlueprintApp(
  app: Probot,
  options: ApplicationFunctionOptions,
  overrides: { env?: BlueprintEnv; deps?: Partial<WorkflowDeps> } = {},
): BlueprintApp {
  const env = overrides.env ?? loadEnv();
  const deps: WorkflowDeps = { ...createWorkflowDeps(env, app.log), ...overrides.deps };
  const queue = new JobQueue((error, job) => app.log.error({ err: error, job: job.label }, "job failed"));
  const intake = new Intake(deps, queue, new RecentKeys());

  // One Octokit per installation, so GitHub's pacing of one busy installation never delays another.
  const octokits = new Map<number, Promise<ProbotOctokit>>();
  const octokitFor = (installationId: number) => {
    let octokit = octokits.get(installationId);
    if (!octokit) {
      octokit = installationOctokit(app, installationId);
      octokit.catch(() => octokits.delete(installationId));
      octokits.set(installationId, octokit);
    }
    return octokit;
  };
  // Ours: a bot comment made through this App (its id), or by this App's bot login. Never just "a bot".
  const isOwnComment = (comment: { user: { login: string; type: string } | null; performed_via_github_app?: { id: number } | null }) =>
    comment.user?.type === "Bot" &&
    ((env.APP_ID !== undefined && comment.performed_via_github_app?.id === env.APP_ID) || comment.user.login === env.BLUEPRINT_BOT_NAME);

  const portFor = async (installationId: number, repository: PayloadRepository, number: number) =>
    createOctokitPort({ octokit: await octokitFor(installationId), repo: repoInfo(repository), number, isOwnComment });

  /** Never make GitHub wait for our writes: answer the webhook, continue in the background. */
  const inFlight = new Set<Promise<void>>();
  const inBackground = (deliveryId: string, work: () => Promise<void>) => {
    // Started on the next turn of the event loop, so the webhook's response is written first.
    const task = new Promise<void>((resolve) => setImmediate(resolve))
      .then(work)
      .catch((error) => app.log.error({ err: error, deliveryId }, "handling a webhook failed"));
    inFlight.add(task);
    void task.finally(() => inFlight.delete(task));
  };
  const idle = async () => {
    while (inFlight.size > 0) {
      await Promise.allSettled([...inFlight]);
      await queue.idle();
    }
    await queue.idle();
  };

  app.on("issue_comment.created", async (context) => {
    const { payload } = context;
    const installationId = payload.installation?.id;
    const author = payload.comment.user;
    if (!installationId || !author) return;
    inBackground(context.id, async () =>
      intake.onComment(await portFor(installationId, payload.repository, payload.issue.number), {
        deliveryId: context.id,
        commentId: payload.comment.id,
        actor: author.login,
        actorIsBot: author.type === "Bot" || payload.sender.type === "Bot",
        body: payload.comment.body,
      }),
    );
  });

  app.on("pull_request_review.submitted", async (context) => {
    const { payload } = context;
    const installationId = payload.installation?.id;
    const reviewer = payload.review.user;
    if (!installationId || !reviewer) return;
    inBackground(context.id, async () =>
      intake.onReview(await portFor(installationId, payload.repository, payload.pull_request.number), {
        deliveryId: context.id,
        reviewId: payload.review.id,
        actor: reviewer.login,
        actorIsBot: reviewer.type === "Bot" || payload.sender.type === "Bot",
        state: payload.review.state,
        body: payload.review.body ?? "",
        commitId: payload.review.commit_id,
        submittedAt: payload.review.submitted_at ?? new Date().toISOString(),
      }),
    );
  });

  app.on("pull_request.synchronize", async (context) => {
    const { payload } = context;
    const installationId = payload.installation?.id;
    if (!installationId) return;
    inBackground(context.id, async () =>
      intake.onSynchronize(await portFor(installationId, payload.repository, payload.pull_request.number), {
        deliveryId: context.id,
        headSha: payload.pull_request.head.sha,
        actor: payload.sender.login,
      }),
    );
  });

  options.addHandler((req, res) => {
    if (req.url !== "/healthz") return false;
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ status: "ok" }));
    return true;
  });

  const shutdown = async (timeoutMs: number) => {
    queue.abortAll("Blueprint was shut down (a restart or deploy); comment `/build` or `/plan` again to resume");
    await Promise.race([idle(), new Promise((resolve) => setTimeout(resolve, timeoutMs).unref())]);
  };

  return { queue, idle, shutdown };
}

function repoInfo(repository: PayloadRepository): RepositoryInfo {
  return {
    owner: repository.owner.login,
    name: repository.name,
    cloneUrl: repository.clone_url,
    defaultBranch: repository.default_branch,
    htmlUrl: repository.html_url,
  };
}
