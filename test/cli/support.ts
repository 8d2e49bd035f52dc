import { execFile, type ChildProcess } from "node:child_process";
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { tempDir } from "../helpers/git-repo.js";

const BIN = path.resolve("bin/blueprint.js");

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the built CLI (`node bin/blueprint.js …`) as a child process, as a person would in a checkout. */
export async function blueprint(
  args: string[],
  options: { cwd: string; env?: Record<string, string> },
): Promise<CliRun> {
  return startBlueprint(args, options).result;
}

/** The same, with a handle on the process (to interrupt it). */
export function startBlueprint(
  args: string[],
  options: { cwd: string; env?: Record<string, string> },
): { child: ChildProcess; result: Promise<CliRun> } {
  const env = {
    PATH: process.env.PATH ?? "",
    HOME: tempDir("blueprint-cli-home-"),
    BLUEPRINT_WORKDIR: tempDir("blueprint-cli-work-"),
    BLUEPRINT_MODEL_RETRIES: "0",
    ...options.env,
  };
  const child = execFile(process.execPath, [BIN, ...args], { cwd: options.cwd, env, encoding: "utf8" });
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (chunk: string) => (stdout += chunk));
  child.stderr?.on("data", (chunk: string) => (stderr += chunk));
  const result = new Promise<CliRun>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code, signal) => resolve({ code: code ?? (signal ? 128 : 1), stdout, stderr }));
  });
  return { child, result };
}

/** The tests run what `npm run build` compiled; a stale lib/ would test old code. */
export function assertCliBuilt(): void {
  const compiled = path.resolve("lib/cli.js");
  const built = statSync(compiled, { throwIfNoEntry: false });
  if (!built) throw new Error("lib/cli.js is missing: run `npm run build` first (npm test does).");
  const sources = ["src/cli.ts", ...readdirSync("src/cli").map((name) => path.join("src/cli", name))];
  const newer = sources.filter((source) => statSync(source).mtimeMs > built.mtimeMs);
  if (newer.length > 0)
    throw new Error(`lib/ is older than ${newer.join(", ")}: run \`npm run build\` first (npm test does).`);
}

export function readThread(
  checkout: string,
  number = 1,
): { comments: Array<{ body: string; own: boolean; author: string }> } {
  return JSON.parse(readFileSync(path.join(checkout, ".git", "blueprint", "threads", `${number}.json`), "utf8"));
}
