import os from "node:os";
import path from "node:path";
import { envSchema, type BlueprintEnv } from "../config/env.js";

/** The account GITHUB_TOKEN acts as: comments it writes carry Blueprint's state in the Action. */
export const ACTIONS_BOT_LOGIN = "github-actions[bot]";
const ACTIONS_BOT_EMAIL = "41898282+github-actions[bot]@users.noreply.github.com";

/** action.yml inputs that configure the engine, and the environment variable each one sets. */
const ENGINE_INPUTS = {
  "openai-api-key": "OPENAI_API_KEY",
  "openai-base-url": "OPENAI_BASE_URL",
  model: "BLUEPRINT_MODEL",
  "min-permission": "BLUEPRINT_MIN_PERMISSION",
  "max-iterations": "BLUEPRINT_MAX_ITERATIONS",
  "max-minutes": "BLUEPRINT_MAX_MINUTES",
  "max-tokens": "BLUEPRINT_MAX_TOKENS",
  "max-cost": "BLUEPRINT_MAX_COST",
  workdir: "BLUEPRINT_WORKDIR",
  "state-secret": "BLUEPRINT_STATE_SECRET",
} as const;

export interface ActionInputs {
  githubToken: string;
  /** Whose comments hold Blueprint's state: the account the token acts as. */
  botLogin: string;
  engine: BlueprintEnv;
}

export class InputError extends Error {}

/** Reads an input the way @actions/core does (`INPUT_<NAME>`), from an injected environment. */
export function readInput(env: NodeJS.ProcessEnv, name: string): string {
  return (env[`INPUT_${name.replace(/ /g, "_").toUpperCase()}`] ?? "").trim();
}

/** The Action's inputs, validated; inputs win over the same settings in the job's `env:`. */
export function readInputs(env: NodeJS.ProcessEnv): ActionInputs {
  const githubToken = readInput(env, "github-token");
  if (!githubToken)
    throw new InputError(
      "the github-token input is empty; leave it at its default (`${{ github.token }}`) or pass a token.",
    );
  const botLogin = readInput(env, "bot-login") || ACTIONS_BOT_LOGIN;

  const source: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) if (value) source[key] = value;
  for (const [input, variable] of Object.entries(ENGINE_INPUTS)) {
    const value = readInput(env, input);
    if (value) source[variable] = value;
  }
  if (!source.BLUEPRINT_STATE_SECRET) {
    // A runner has no secret of its own that lasts between runs; without one, the hidden state could be forged by
    // anyone who can edit a comment.
    throw new InputError(
      "the state-secret input is empty. Blueprint signs the hidden state in its plan comments with it, so that nobody can edit, copy or swap it: create a repository secret (e.g. `openssl rand -hex 32`) and pass `state-secret: ${{ secrets.BLUEPRINT_STATE_SECRET }}`.",
    );
  }
  source.BLUEPRINT_WORKDIR ??= path.join(env.RUNNER_TEMP || os.tmpdir(), "blueprint");
  // An ephemeral runner holding only this job's token: bubblewrap when it works, else a warning (docs/security.md, "The
  // sandbox").
  source.BLUEPRINT_SANDBOX ??= "auto";
  source.BLUEPRINT_BOT_NAME = botLogin;
  source.BLUEPRINT_BOT_EMAIL =
    botLogin === ACTIONS_BOT_LOGIN ? ACTIONS_BOT_EMAIL : `${botLogin}@users.noreply.github.com`;

  const parsed = envSchema.safeParse(source);
  if (!parsed.success) {
    const byVariable = Object.fromEntries(Object.entries(ENGINE_INPUTS).map(([input, variable]) => [variable, input]));
    const problems = parsed.error.issues.map((issue) => {
      const variable = String(issue.path[0] ?? "");
      const input = byVariable[variable];
      return `${input ? `input ${input}` : variable}: ${issue.message}`;
    });
    throw new InputError(`invalid settings: ${problems.join("; ")}`);
  }
  return { githubToken, botLogin, engine: parsed.data };
}
