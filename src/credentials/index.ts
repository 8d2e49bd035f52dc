/**
 * A job's GitHub credentials, and the only module others import of them: minted with the App's key
 * (intake), renewed as jobs go (worker → intake, runner → worker, or through Redis), sealed into a
 * job for Redis, and scoped (one repository, the job's lifetime, a job that runs now). Below the job
 * runtime, code holds a `TokenGetter` (shared/token-getter.ts), never one of these.
 */
export { jobTokenSchema, expiresSoon, fresherThan, TOKEN_MARGIN_MS, type JobToken, type JobTokenSource, type TokenFor } from "./job-token.js";
export { intakeTokens, type IntakeTokens } from "./intake-tokens.js";
export { renewingToken } from "./renewable-token.js";
export { Sealer } from "./sealed.js";
export { openToken, QUEUE_LIFE_MS, sealToken } from "./sealed-token.js";
export { answerTokenRequests, RefreshRefused, TokenRefresher, TokenUnavailable } from "./redis-renewal.js";
