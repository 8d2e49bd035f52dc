// The load bench's fixed conditions (issue #11's), and the knobs a run may turn (environment).
import { fileURLToPath } from "node:url";

export type Mode = "local" | "redis";

/**
 * 100 (issue #11's). BENCH_LOAD_INSTALLATIONS, fewer, is for trying the bench out on a busy machine: the first 50 have
 * two issues, the first 60 issues six /plan, the first 20 a /status, the rest a reader's /plan, the first 50 a bot's,
 * so 10 make about 160 webhooks; figures from fewer are not issue #11's and say nothing about its targets.
 */
export const INSTALLATIONS = positive("BENCH_LOAD_INSTALLATIONS", 100);
/** Installations with two issues (the others have one): 150 issues in all. */
export const TWO_ISSUES = 50;
/** Issues that get six writer /plan (the others five): 60 × 6 + 90 × 5 = 810. */
export const SIX_PLANS = 60;
export const FIRST_INSTALLATION_ID = 1000;
export const WEBHOOK_SECRET = "bench-load-webhook-secret-7c2e";
export const TARGETS = { webhookP99Ms: 100, firstReactionP99Ms: 1000 };
/**
 * Once every expected effect is there: no new call to the double for this long ends the run (longer than the 3 s
 * comment pacing).
 */
export const QUIET_MS = 5_000;

/** Jobs at once per worker process (the app's BLUEPRINT_CONCURRENCY): they mostly wait on GitHub's pacing of writes. */
export const JOB_CONCURRENCY = positive("BENCH_LOAD_JOB_CONCURRENCY", 32);
export const MODES = (process.env.BENCH_LOAD_MODES ?? "local,redis")
  .split(",")
  .map((mode) => mode.trim())
  .filter((mode): mode is Mode => mode === "local" || mode === "redis");
/** Webhooks in flight at once. */
export const CONCURRENCY = positive("BENCH_LOAD_CONCURRENCY", 100);
/** The whole of one run, setup and teardown included, stops waiting after this. */
export const HARD_DEADLINE_MS = positive("BENCH_LOAD_DEADLINE_S", 300) * 1000;
/**
 * Bots' comments sent before the burst, unmeasured, one run per value (see warmUp in sender.ts).
 * 0, the default, measures a process that has just started (issue #29: the targets stand for one);
 * `BENCH_LOAD_WARM_UP=0,3000` prints a long-running App's figures beside it.
 */
export const WARM_UPS = counts("BENCH_LOAD_WARM_UP", [0]);

export const LOOP_PROBE = fileURLToPath(new URL("../support/loop-probe.mjs", import.meta.url));
export const SENDER = fileURLToPath(new URL("../support/webhook-sender.mjs", import.meta.url));

function positive(name: string, fallback: number): number {
  const value = Number(process.env[name]);
  return Number.isFinite(value) && value > 0 ? Math.floor(value) : fallback;
}

/** A comma-separated list of whole numbers ≥ 0; the fallback when none is given or one is not a number. */
function counts(name: string, fallback: number[]): number[] {
  const values = (process.env[name] ?? "")
    .split(",")
    .map((value) => value.trim())
    .filter((value) => value !== "")
    .map(Number);
  return values.length > 0 && values.every((value) => Number.isInteger(value) && value >= 0) ? values : fallback;
}
