/**
 * The door to credentials/ for processes on Redis (see index.ts): a running job's token renewed through the intakes.
 */
export { answerTokenRequests, RefreshRefused, TokenRefresher, TokenUnavailable } from "./redis-renewal.js";
