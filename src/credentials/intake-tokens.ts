import { createPrivateKey } from "node:crypto";
import { getPrivateKey } from "@probot/get-private-key";
import type { Probot } from "probot";
import type { BlueprintEnv } from "../config/env.js";
import { appTokenMinter, type TokenMinter } from "../github/app-jwt.js";
import { installationOctokit } from "../github/installation-octokit.js";
import { githubApiUrl } from "../github/token-port.js";
import { JobTokens, type CredentialsLog, type JobTokenSource, type MinterFor } from "./job-token.js";

/** The intake's job tokens. */
export type IntakeTokens = JobTokenSource;

/**
 * Intake mints each job's token (narrowed to its repository) with the App's key; workers never hold
 * the key. With the key in the App's environment (as `npm start` has it), signed with an App token
 * reused for minutes (app-jwt.ts); otherwise (an App handed a Probot instance) through Probot's own
 * authentication. On the intake's own thread: a thread of its own was measured against this in the
 * same burst and did not pay (`npm run bench ablate`, docs/benchmarks.md).
 */
export function intakeTokens(app: Probot, env: BlueprintEnv): IntakeTokens {
  const minter: MinterFor =
    ownMinter(env, app.log) ??
    (async (installationId) => (await installationOctokit(app, installationId, "mint")) as unknown as TokenMinter);
  return new JobTokens(minter);
}

/** Mints with the App's key from its environment; null without a usable key. */
function ownMinter(env: BlueprintEnv, log: CredentialsLog): MinterFor | null {
  const privateKey = getPrivateKey({ env: { PRIVATE_KEY: env.PRIVATE_KEY, PRIVATE_KEY_PATH: env.PRIVATE_KEY_PATH } });
  if (!env.APP_ID || !privateKey) return null;
  try {
    // Read here, so a key that does not parse falls back at once rather than failing every mint.
    createPrivateKey(privateKey);
    return appTokenMinter({ appId: env.APP_ID, privateKey, baseUrl: githubApiUrl(env), log });
  } catch (error) {
    log.warn(
      { err: error },
      "the App's private key could not be read here; job tokens are requested through Probot's authentication",
    );
    return null;
  }
}
