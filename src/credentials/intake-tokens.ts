import { createPrivateKey } from "node:crypto";
import { getPrivateKey } from "@probot/get-private-key";
import type { Probot } from "probot";
import type { BlueprintEnv } from "../config/env.js";
import type { TokenMinter } from "../github/app-jwt.js";
import { installationOctokit } from "../github/installation-octokit.js";
import { githubApiUrl } from "../github/token-port.js";
import { JobTokens, type CredentialsLog, type JobTokenSource } from "./job-token.js";
import { MintThread } from "./mint-thread.js";

/** The intake's job tokens, and a way to stop the thread that mints them (if there is one). */
export type IntakeTokens = JobTokenSource & { close(): Promise<void> };

/**
 * Intake mints each job's token (narrowed to its repository) with the App's key; workers never hold
 * the key. With the key in the App's environment (as `npm start` has it), on a thread of its own,
 * signed with an App token reused for minutes; otherwise (an App handed a Probot instance) through
 * Probot's own authentication.
 */
export function intakeTokens(app: Probot, env: BlueprintEnv): IntakeTokens {
  const thread = ownMintThread(env, app.log);
  if (thread) return thread;
  const tokens = new JobTokens(
    async (installationId) => (await installationOctokit(app, installationId, "mint")) as unknown as TokenMinter,
  );
  return { forJob: (job) => tokens.forJob(job), close: async () => {} };
}

/** The token thread, minting with the App's key from its environment; null without a usable key. */
function ownMintThread(env: BlueprintEnv, log: CredentialsLog): MintThread | null {
  const privateKey = getPrivateKey({ env: { PRIVATE_KEY: env.PRIVATE_KEY, PRIVATE_KEY_PATH: env.PRIVATE_KEY_PATH } });
  if (!env.APP_ID || !privateKey) return null;
  try {
    // Read here, so a key that does not parse falls back at once rather than failing every mint.
    createPrivateKey(privateKey);
    return new MintThread({ appId: env.APP_ID, privateKey, baseUrl: githubApiUrl(env), log });
  } catch (error) {
    log.warn(
      { err: error },
      "the App's private key could not be read here; job tokens are requested through Probot's authentication",
    );
    return null;
  }
}
