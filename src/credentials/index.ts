/**
 * A job's GitHub credentials: minted with the App's key (intake), renewed as jobs go (worker →
 * intake, runner → worker, or through Redis), sealed into a job for Redis, and scoped (one
 * repository, the job's lifetime, a job that runs now). Below the job runtime, code holds a
 * `TokenGetter` (shared/token-getter.ts), never one of these.
 *
 * Three doors, one per kind of process, because an ES module loads everything it re-exports: this
 * one, for every process that holds a job's token (no BullMQ, no App key reader, so a job runner
 * starts without them); `intake.ts`, for the process that mints; `redis.ts`, for renewal through Redis.
 * Nothing outside this folder imports any other file of it (test/architecture/import-directions.test.ts).
 */
export {
  jobTokenSchema,
  expiresSoon,
  fresherThan,
  TOKEN_MARGIN_MS,
  type JobToken,
  type JobTokenSource,
  type TokenFor,
} from "./job-token.js";
export { renewingToken, type RenewToken } from "./renewable-token.js";
export { jobSealer, Sealer } from "./sealed.js";
export { openToken, QUEUE_LIFE_MS, sealToken } from "./sealed-token.js";
