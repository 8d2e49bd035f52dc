import { readFileSync } from "node:fs";
import path from "node:path";
import { parseEnv } from "node:util";
import { Probot, run } from "probot";
import { loadEnv } from "./config/env.js";
import { startSetupServer } from "./setup/setup-server.js";
import { requireSandbox, sandboxProblem } from "./app/sandbox-choice.js";

/**
 * `npm start`: with App credentials, exactly `probot run ./lib/index.js`, once bubblewrap has been found
 * to work here; without any, Blueprint's setup mode (Probot's registration flow, plus /healthz and a
 * warning when GitHub could not reach the webhook URL or bubblewrap does not work). Wiring only.
 */

// 1. The environment as Probot reads it: the process's variables over .env.
const env = { ...dotEnv(), ...process.env };
const credentials = Boolean(env.APP_ID || env.PRIVATE_KEY || env.PRIVATE_KEY_PATH);

if (credentials || env.NODE_ENV === "production") {
  // 2. The sandbox, before anything listens or is forked: without it, one message and exit 1 (fail closed).
  try {
    requireSandbox(loadEnv(env));
  } catch (error) {
    refuse(error);
  }
  // 3. The App (Probot decides the rest, and refuses to run without credentials in production).
  await run([new URL("./index.js", import.meta.url).href], { env: process.env }).catch((error: unknown) => {
    refuse(
      error,
      credentials
        ? ""
        : "To register a GitHub App with this build, start it once with NODE_ENV=development (setup mode), then restart it.\n",
    );
  });
} else {
  // 4. Setup mode: registering the App needs no sandbox, so it is served anyway, saying what jobs will need.
  const logger = new Probot({ appId: 1, privateKey: "dummy value for setup mode", logLevel: logLevel(env.LOG_LEVEL) });
  await logger.ready();
  Object.assign(process.env, { ...dotEnv(), ...process.env });
  const sandbox = sandboxProblem(env.BLUEPRINT_SANDBOX);
  await startSetupServer({
    env: process.env,
    host: env.HOST ?? "localhost",
    port: Number(env.PORT ?? 3000),
    log: logger.log,
    sandboxProblem: sandbox,
  });
}

/** One plain message on stderr (no stack, no log line around it) and exit 1. */
function refuse(error: unknown, hint = ""): never {
  process.stderr.write(`blueprint: ${error instanceof Error ? error.message : String(error)}\n${hint}`);
  process.exit(1);
}

function dotEnv(): Record<string, string> {
  try {
    return parseEnv(readFileSync(path.join(process.cwd(), ".env"), "utf8")) as Record<string, string>;
  } catch {
    return {};
  }
}

function logLevel(level: string | undefined): "trace" | "debug" | "info" | "warn" | "error" | "fatal" {
  return level === "trace" || level === "debug" || level === "warn" || level === "error" || level === "fatal"
    ? level
    : "info";
}
