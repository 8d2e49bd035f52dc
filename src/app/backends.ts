import type { Probot } from "probot";
import type { BlueprintEnv } from "../config/env.js";
import type { JobTokenSource } from "../credentials/index.js";
import { createOctokitPort } from "../github/octokit-port.js";
import { installationOctokit } from "../github/installation-octokit.js";
import { ownCommentMatcher } from "../github/own-comment.js";
import type { JobBackend } from "../jobs/backend.js";
import { LocalJobs } from "../jobs/local-jobs.js";
import { ForkedRedisWorker } from "../jobs/forked-redis-worker.js";
import { LocalWorkerBackend, withoutIntakeSecrets } from "../jobs/local-worker.js";
import type { JobMetrics } from "../jobs/metrics.js";
import type { WorkerMetricsSource } from "../jobs/operator-pages.js";
import { startRedisBackend } from "../jobs/redis-backend.js";
import { stateKeyOf } from "./create-deps.js";
import type { WorkflowDeps } from "../workflow/deps.js";
import { CHILD_ENTRIES } from "./entries.js";

/**
 * Without Redis, where jobs run: a forked local worker (`npm start`), or this process (tests that
 * replace parts of the engine, which cannot cross into another process).
 */
export type JobsWhere = "local-worker" | "in-process";

/**
 * Where jobs run. With Redis: BullMQ, shared by every intake and worker; `npm start` that also works
 * jobs forks a queue worker (`npm run worker`'s code, with its own job runner), so triage never runs on
 * the intake's event loop and neither holds the intake's secrets. Without Redis: a forked local worker
 * (`npm start`), or this process (tests that replace parts of the engine).
 */
export function chooseBackend(options: {
  app: Probot;
  env: BlueprintEnv;
  metrics: JobMetrics;
  tokens: JobTokenSource;
  deps: () => WorkflowDeps;
  jobs: JobsWhere;
}): {
  backend: JobBackend & Partial<WorkerMetricsSource>;
  forkedWorker: ForkedRedisWorker | null;
} {
  const { app, env, metrics, tokens } = options;
  if (env.REDIS_URL) {
    const forkedWorker =
      env.BLUEPRINT_WORKERS > 0 && options.jobs === "local-worker"
        ? new ForkedRedisWorker({ entry: CHILD_ENTRIES.queueWorker, env: queueWorkerEnvironment(), log: app.log })
        : null;
    const backend = startRedisBackend({
      env,
      redisUrl: env.REDIS_URL,
      log: app.log,
      metrics,
      tokens,
      workerDeps: env.BLUEPRINT_WORKERS > 0 && !forkedWorker ? options.deps() : null,
      ...(forkedWorker ? { workerMetrics: () => forkedWorker.workerMetrics() } : {}),
    });
    return { backend, forkedWorker };
  }
  if (options.jobs === "local-worker") {
    return {
      backend: new LocalWorkerBackend({
        entry: CHILD_ENTRIES.localWorker,
        tokens,
        stateKey: stateKeyOf(env).export(),
        log: app.log,
      }),
      forkedWorker: null,
    };
  }
  return { backend: inProcessBackend(app, env, options.deps(), metrics), forkedWorker: null };
}

/**
 * The forked queue worker's environment: without the intake's secrets, and without PORT (it serves no pages of its
 * own).
 */
function queueWorkerEnvironment(): NodeJS.ProcessEnv {
  const env = withoutIntakeSecrets(process.env);
  delete env.PORT;
  return env;
}

/**
 * One process: the worker uses Probot's installation Octokits, one budget each for acknowledgements, quick answers and
 * jobs.
 */
function inProcessBackend(app: Probot, env: BlueprintEnv, deps: WorkflowDeps, metrics: JobMetrics): LocalJobs {
  const isOwnComment = ownCommentMatcher({ appId: env.APP_ID, botLogin: env.BLUEPRINT_BOT_NAME });
  return new LocalJobs({
    deps,
    concurrency: env.BLUEPRINT_CONCURRENCY,
    metrics,
    portsFor: async (job) => {
      const port = async (budget: "ack" | "reply" | "work") =>
        createOctokitPort({
          octokit: await installationOctokit(app, job.installationId, budget),
          repo: job.repository,
          number: job.number,
          isOwnComment,
        });
      const [ack, reply, work] = await Promise.all([port("ack"), port("reply"), port("work")]);
      return { ack, reply, work };
    },
  });
}
