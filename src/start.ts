import { readFileSync } from "node:fs";
import path from "node:path";
import { parseEnv } from "node:util";
import { Probot, run } from "probot";
import { startSetupServer } from "./setup/setup-server.js";

/**
 * `npm start`: with App credentials, exactly `probot run ./lib/index.js`; without any, Blueprint's setup
 * mode (Probot's registration flow, plus /healthz and a warning when GitHub could not reach the webhook URL).
 * Wiring only.
 */

// 1. The environment as Probot reads it: the process's variables over .env.
const env = { ...dotEnv(), ...process.env };
const credentials = Boolean(env.APP_ID || env.PRIVATE_KEY || env.PRIVATE_KEY_PATH);

if (credentials || env.NODE_ENV === "production") {
  // 2. The App (Probot decides the rest, and refuses to run without credentials in production).
  await run([new URL("./index.js", import.meta.url).href], { env: process.env }).catch((error: unknown) => {
    process.stderr.write(`blueprint: ${error instanceof Error ? error.message : String(error)}\n`);
    if (!credentials) process.stderr.write("To register a GitHub App with this build, start it once with NODE_ENV=development (setup mode), then restart it.\n");
    process.exit(1);
  });
} else {
  // 3. Setup mode.
  const logger = new Probot({ appId: 1, privateKey: "dummy value for setup mode", logLevel: logLevel(env.LOG_LEVEL) });
  await logger.ready();
  Object.assign(process.env, { ...dotEnv(), ...process.env });
  await startSetupServer({ env: process.env, host: env.HOST ?? "localhost", port: Number(env.PORT ?? 3000), log: logger.log });
}

function dotEnv(): Record<string, string> {
  try {
    return parseEnv(readFileSync(path.join(process.cwd(), ".env"), "utf8")) as Record<string, string>;
  } catch {
    return {};
  }
}

function logLevel(level: string | undefined): "trace" | "debug" | "info" | "warn" | "error" | "fatal" {
  return level === "trace" || level === "debug" || level === "warn" || level === "error" || level === "fatal" ? level : "info";
}
