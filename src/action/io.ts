import { promises as fs } from "node:fs";
import os from "node:os";
import * as core from "@actions/core";
import type { Logger } from "../workflow/deps.js";

/** What the Action tells the runner: logs, masks, outputs, the job summary, the verdict. */
export interface ActionIo {
  info(message: string): void;
  warning(message: string): void;
  error(message: string): void;
  setSecret(secret: string): void;
  setOutput(name: string, value: string): void;
  setFailed(message: string): void;
  /** Appends to the job summary; a no-op outside a runner (no GITHUB_STEP_SUMMARY). */
  writeSummary(markdown: string): Promise<void>;
}

/** The runner's workflow commands and files, through @actions/core; `env` is the step's, as the entry hands it in. */
export function coreIo(env: NodeJS.ProcessEnv): ActionIo {
  return {
    info: (message) => core.info(message),
    warning: (message) => core.warning(message),
    error: (message) => core.error(message),
    setSecret: (secret) => core.setSecret(secret),
    setOutput: (name, value) => core.setOutput(name, value),
    setFailed: (message) => core.setFailed(message),
    async writeSummary(markdown) {
      // core.summary remembers the first file it wrote to for the life of the process; the step's file is in env.
      const file = env.GITHUB_STEP_SUMMARY;
      if (!file) return;
      await fs.appendFile(file, `${markdown}${os.EOL}`, "utf8");
    },
  };
}

/** The engine's structured log lines as readable workflow log lines. */
export function actionLogger(io: ActionIo): Logger {
  const line = (object: object, message?: string) => {
    const details = Object.entries(object).map(
      ([key, value]) => `${key}=${value instanceof Error ? value.message : JSON.stringify(value)}`,
    );
    return [message ?? "", ...details].filter(Boolean).join(" ");
  };
  return {
    info: (object, message) => io.info(line(object, message)),
    warn: (object, message) => io.warning(line(object, message)),
    error: (object, message) => io.error(line(object, message)),
  };
}
