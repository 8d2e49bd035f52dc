// The app under test, as an operator runs it: local (`npm start` alone), or with Redis (one
// intake with BLUEPRINT_WORKERS=0 and two `npm run worker` processes).
import path from "node:path";
import { rmSync } from "node:fs";
import type { GitHubDouble } from "../../test/e2e/double/github-server.js";
import { PROJECT_ROOT, startAppProcess, type AppProcess } from "../../test/e2e/support/app-process.js";
import { startWorkerProcess, type WorkerProcess } from "../../test/e2e/support/worker-process.js";
import type { ModelServer } from "../../test/helpers/model-server.js";
import { startRedisServer, type RedisServer } from "../../test/helpers/redis-server.js";
import { JOB_CONCURRENCY, LOOP_PROBE, WEBHOOK_SECRET, type Mode } from "./config.js";

/** What one run started, filled in as it starts: stopped in the end whatever got this far. */
export interface Processes {
  app?: AppProcess;
  redis?: RedisServer;
  workers: WorkerProcess[];
}

/**
 * Starts the app (and Redis and two workers in Redis mode) into `into`, talking to `github` and `model`; the app's
 * build in `root` (this checkout's by default; BENCH_BASELINE's is another: bench/support/baseline.mjs).
 */
export async function startProcesses(
  into: Processes,
  mode: Mode,
  github: GitHubDouble,
  model: ModelServer,
  scratch: string,
  probeFile: string,
  root = PROJECT_ROOT,
): Promise<AppProcess> {
  const shared = {
    HOME: path.join(scratch, "home"),
    APP_ID: String(github.appId),
    GHE_HOST: github.host,
    GHE_PROTOCOL: "http",
    OPENAI_BASE_URL: model.url,
    OPENAI_API_KEY: "sk-bench-load-0000000000000000000000",
    BLUEPRINT_MODEL: "bench-model",
    BLUEPRINT_STATE_SECRET: "bench-load-state-secret-shared-by-all",
    BLUEPRINT_CONCURRENCY: String(JOB_CONCURRENCY),
  };
  const redis = mode === "redis" ? await startRedisServer() : undefined;
  into.redis = redis;
  const app = await startAppProcess(
    {
      ...shared,
      PRIVATE_KEY: github.privateKey ?? "",
      WEBHOOK_SECRET,
      LOG_LEVEL: "warn",
      BLUEPRINT_WORKDIR: path.join(scratch, "workdir"),
      ...(redis ? { REDIS_URL: redis.url, BLUEPRINT_WORKERS: "0" } : {}),
      // The app's event-loop delay, measured from inside (bench/support/loop-probe.mjs); more options for looking into
      // it.
      NODE_OPTIONS: [`--import ${JSON.stringify(LOOP_PROBE)}`, process.env.BENCH_LOAD_APP_NODE_OPTIONS ?? ""]
        .join(" ")
        .trim(),
      BENCH_LOOP_PROBE_FILE: probeFile,
    },
    { root },
  );
  into.app = app;
  if (redis) {
    for (const n of [1, 2])
      into.workers.push(
        await startWorkerProcess(
          {
            ...shared,
            LOG_LEVEL: "info",
            REDIS_URL: redis.url,
            BLUEPRINT_WORKDIR: path.join(scratch, `worker-${n}`),
          },
          root,
        ),
      );
  }
  return app;
}

export async function stopProcesses(processes: Processes): Promise<void> {
  await processes.app?.stop().catch((error: unknown) => console.error("could not stop the app:", error));
  await Promise.all(processes.workers.map((worker) => worker.stop().catch(() => undefined)));
  await processes.redis?.stop().catch(() => undefined);
}

/**
 * Stopped from outside (bench/index.mjs's hard limit, Ctrl-C): the app runs in its own process
 * group, so take it along. Returns the function that removes the handlers.
 */
export function killOnSignal(processes: Processes, scratch: string): () => void {
  const onSignal = () => {
    for (const pid of [processes.app?.pid, ...processes.workers.map((w) => w.pid)]) {
      if (pid && pid > 0) {
        try {
          process.kill(-pid, "SIGKILL");
        } catch {
          // Already gone.
        }
      }
    }
    void processes.redis?.stop();
    rmSync(scratch, { recursive: true, force: true });
    process.exit(130);
  };
  process.once("SIGTERM", onSignal);
  process.once("SIGINT", onSignal);
  return () => {
    process.removeListener("SIGTERM", onSignal);
    process.removeListener("SIGINT", onSignal);
  };
}
