import { retry } from "@octokit/plugin-retry";
import { throttling } from "@octokit/plugin-throttling";
import { Octokit } from "@octokit/rest";
import type { PortOctokit } from "../github/octokit-port.js";
import type { Logger } from "../workflow/deps.js";

const ActionOctokit = Octokit.plugin(retry, throttling);

/** Retries once after a primary rate limit; a secondary limit means "slow down", so give up and say so. */
const RATE_LIMIT_RETRIES = 1;

export interface ActionOctokitOptions {
  token: string;
  /** GITHUB_API_URL: api.github.com, or a GitHub Enterprise Server's /api/v3. */
  baseUrl: string;
  log: Logger;
  fetch?: typeof globalThis.fetch | undefined;
  /** GitHub asks for a second between writes; off only where nothing is rate-limited (tests). */
  paced?: boolean;
  /** Told of every request that failed (after retries), with the address it went to; the error goes on as it was. */
  onError?: ((error: unknown, url: string) => void) | undefined;
}

/** @octokit/rest with a token, retries on 5xx and GitHub's rate-limit pacing, as Probot gives the App. */
export function createActionOctokit(options: ActionOctokitOptions): PortOctokit {
  const octokit = new ActionOctokit({
    auth: options.token,
    baseUrl: options.baseUrl.replace(/\/+$/, ""),
    userAgent: "blueprint-action",
    ...(options.fetch ? { request: { fetch: options.fetch } } : {}),
    // A failed request is often expected (a 404 for a non-collaborator); the use case reports the ones that matter.
    log: {
      debug: () => {},
      info: () => {},
      warn: (message: string) => options.log.warn({}, message),
      error: (message: string) => options.log.info({}, message),
    },
    throttle: {
      enabled: options.paced ?? true,
      onRateLimit: (retryAfter, request, _octokit, retryCount) => {
        options.log.warn({ retryAfter, url: request.url }, "GitHub rate limit hit");
        return retryCount < RATE_LIMIT_RETRIES;
      },
      onSecondaryRateLimit: (retryAfter, request) => {
        options.log.warn({ retryAfter, url: request.url }, "GitHub secondary rate limit hit");
        return false;
      },
    },
  });
  const { onError } = options;
  if (onError)
    octokit.hook.error("request", (error, request) => {
      onError(error, (error as { request?: { url?: string } }).request?.url ?? request.url);
      throw error;
    });
  return octokit;
}
