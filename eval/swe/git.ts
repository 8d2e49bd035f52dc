import { spawn } from "node:child_process";

export interface GitResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs git with no prompts, no user config and no hooks from the environment: the trees it works
 * on are throwaway checkouts, and a judge must not depend on the machine's git settings.
 */
export function git(
  args: string[],
  options: { cwd: string; input?: string; allowFailure?: boolean },
): Promise<GitResult> {
  return new Promise((resolve, reject) => {
    const child = spawn("git", args, {
      cwd: options.cwd,
      env: { ...process.env, GIT_TERMINAL_PROMPT: "0", GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" },
      stdio: [options.input === undefined ? "ignore" : "pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout?.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr?.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    child.on("error", reject);
    child.on("close", (code) => {
      if (code !== 0 && !options.allowFailure)
        reject(new Error(`git ${args.join(" ")} failed (${code}): ${stderr.trim() || stdout.trim()}`));
      else resolve({ code, stdout, stderr });
    });
    // git may exit (a patch that does not apply) before reading all of its input.
    child.stdin?.on("error", () => undefined);
    child.stdin?.end(options.input);
  });
}
