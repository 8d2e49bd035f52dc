import { z } from "zod";
import { PERMISSION_LEVELS } from "../github/permission.js";
import { defaultWorkdir } from "../workspace/repo-cache.js";
import { priceTableSchema } from "../shared/model-usage.js";
import { parseNetworkCeiling } from "../workspace/egress-policy.js";

const positiveInt = (fallback: number) => z.coerce.number().int().positive().default(fallback);
/** pino's levels; each process logs at this one (Probot reads LOG_LEVEL itself for the intake's). */
const logLevelSchema = z.enum(["trace", "debug", "info", "warn", "error", "fatal", "silent"]).default("info");

/** Blueprint's own environment variables (Probot reads its own). */
export const envSchema = z.object({
  OPENAI_BASE_URL: z
    .string()
    .url()
    .optional()
    .or(z.literal("").transform(() => undefined)),
  OPENAI_API_KEY: z.string().optional(),
  BLUEPRINT_MODEL: z.string().min(1).default("gpt-4.1"),
  BLUEPRINT_WORKDIR: z.string().min(1).default(defaultWorkdir()),
  /**
   * Bound on the work directory in GiB (2^30 bytes; fractions allowed): least recently used repositories are evicted
   * past it. Unset: no bound.
   */
  BLUEPRINT_WORKDIR_MAX_GB: z.coerce.number().positive().optional(),
  BLUEPRINT_MIN_PERMISSION: z.enum(PERMISSION_LEVELS).default("write"),
  BLUEPRINT_MAX_ITERATIONS: positiveInt(50),
  BLUEPRINT_MAX_MINUTES: positiveInt(20),
  BLUEPRINT_MAX_TOKENS: positiveInt(2_000_000),
  /**
   * Dollars per build, counted with the prices below and the repository's; a repository's `limits.max_cost` can only
   * lower it.
   */
  BLUEPRINT_MAX_COST: z.coerce.number().positive().optional(),
  /**
   * JSON: `{"<model>": {"input": 2, "cached_input": 0.5, "output": 8}}`, dollars per million tokens; wins over a
   * repository's `prices`.
   */
  BLUEPRINT_PRICES: z
    .string()
    .transform((text, context) => {
      try {
        return JSON.parse(text) as unknown;
      } catch {
        context.addIssue({ code: "custom", message: "is not valid JSON" });
        return z.NEVER;
      }
    })
    .pipe(priceTableSchema)
    .default({}),
  /**
   * How soon the model endpoint must start answering each attempt, and its longest silence within a streamed answer.
   */
  BLUEPRINT_MODEL_TIMEOUT_S: positiveInt(60),
  BLUEPRINT_MODEL_RETRIES: z.coerce.number().int().min(0).max(10).default(3),
  /**
   * The least time between one installation's writes to GitHub (GitHub asks for a second); writes that
   * notify people wait three times it, searches twice. 0 only where nothing is rate-limited (a test double).
   */
  BLUEPRINT_GITHUB_WRITE_GAP_MS: z.coerce.number().int().min(0).max(60_000).default(1000),
  /** Minimum time between edits of the tracking comment while a job runs. */
  BLUEPRINT_PROGRESS_INTERVAL_MS: z.coerce.number().int().min(0).default(5000),
  /**
   * Where agent commands run: always inside bubblewrap, refusing to start without it (bwrap, the
   * default; the App and the worker treat auto so too); inside it when it works here, else with a
   * warning (auto, the Action's and CLI's default); never (none).
   */
  BLUEPRINT_SANDBOX: z.enum(["auto", "bwrap", "none"]).default("bwrap"),
  /**
   * What agent commands may reach at most, whatever a repository's `network:` says: comma-separated
   * `host`, `host:port`, `*.suffix`, `address:port` (the only way to allow a loopback or private
   * address), `registries` (the built-in list) or `none`. Unset: the built-in registries.
   */
  BLUEPRINT_NETWORK_ALLOW: z
    .string()
    .optional()
    .transform((text, context) => {
      const parsed = parseNetworkCeiling(text);
      if (parsed.ok) return parsed.entries;
      context.addIssue({ code: "custom", message: parsed.message });
      return z.NEVER;
    }),
  /** Clones and fetches at once across all repositories (a burst of jobs must not starve webhook handling). */
  BLUEPRINT_MAX_FETCHES: positiveInt(4),
  /** Clean worktrees kept per repository for later jobs; 0 removes each job's worktree at once. */
  BLUEPRINT_WORKTREE_POOL: z.coerce.number().int().min(0).max(32).default(2),
  BLUEPRINT_BOT_NAME: z.string().default("blueprint[bot]"),
  BLUEPRINT_BOT_EMAIL: z.string().default("blueprint[bot]@users.noreply.github.com"),
  /** With it, the job queue is BullMQ on this Redis, shared by every intake and worker process. */
  REDIS_URL: z.string().min(1).optional(),
  /** `0`: this `npm start` only answers webhooks and enqueues; jobs run in `npm run worker` processes. */
  BLUEPRINT_WORKERS: z.coerce.number().int().min(0).default(1),
  /** Jobs one process runs at once; the rest wait, shown as "Queued" on their thread. */
  BLUEPRINT_CONCURRENCY: positiveInt(8),
  /** How long a dead worker's job and thread stay locked before another worker takes the job over (Redis). */
  BLUEPRINT_JOB_LOCK_MS: z.coerce.number().int().min(500).default(30_000),
  /**
   * Signs the hidden plan state; without it the App derives its key from WEBHOOK_SECRET. With Redis it
   * is required and shared by intake and workers: it also seals each job's installation token in Redis.
   * Workers need this, never PRIVATE_KEY or WEBHOOK_SECRET.
   */
  BLUEPRINT_STATE_SECRET: z.string().min(16, "use at least 16 characters (e.g. `openssl rand -hex 32`)").optional(),
  GHE_HOST: z.string().min(1).optional(),
  GHE_PROTOCOL: z.enum(["http", "https"]).default("https"),
  APP_ID: z.coerce.number().int().optional(),
  WEBHOOK_SECRET: z.string().optional(),
  PRIVATE_KEY: z.string().optional(),
  /** Probot reads the key from here; Blueprint only hides it (and its directory) from agent commands. */
  PRIVATE_KEY_PATH: z.string().optional(),
  LOG_LEVEL: logLevelSchema,
  /**
   * Where `npm run worker` serves /healthz and /metrics (none without PORT); Probot reads both itself for the intake.
   */
  PORT: z.coerce.number().int().min(0).max(65535).optional(),
  HOST: z.string().min(1).default("127.0.0.1"),
});

/** Not settings: what `npm start` and `npm run worker` hand to the processes they fork. */
const handedOverSchema = z.object({
  /** The bubblewrap checked at start (app/sandbox-choice.ts): used as it is, never probed or given up again. */
  BLUEPRINT_SANDBOX_CHECKED: z.string().min(1).optional(),
});

export type BlueprintEnv = z.output<typeof envSchema> & z.output<typeof handedOverSchema>;

export class ConfigError extends Error {}

/** BLUEPRINT_WORKDIR_MAX_GB in bytes, or null without a bound. */
export function workdirLimitBytes(env: Pick<BlueprintEnv, "BLUEPRINT_WORKDIR_MAX_GB">): number | null {
  return env.BLUEPRINT_WORKDIR_MAX_GB === undefined ? null : Math.floor(env.BLUEPRINT_WORKDIR_MAX_GB * 2 ** 30);
}

/**
 * LOG_LEVEL alone, for a logger made before the rest is read (so that a ConfigError can be logged); "info" if unset or
 * unknown.
 */
export function logLevelOf(source: NodeJS.ProcessEnv = process.env): z.output<typeof logLevelSchema> {
  const parsed = logLevelSchema.safeParse(source.LOG_LEVEL || undefined);
  return parsed.success ? parsed.data : "info";
}

export function loadEnv(source: NodeJS.ProcessEnv = process.env): BlueprintEnv {
  const cleaned = Object.fromEntries(Object.entries(source).filter(([, value]) => value !== undefined && value !== ""));
  const parsed = envSchema.extend(handedOverSchema.shape).safeParse(cleaned);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`).join("; ");
    throw new ConfigError(`invalid Blueprint environment: ${problems}`);
  }
  return parsed.data;
}
