import { ConfigError, type BlueprintEnv } from "../config/env.js";
import { checkBubblewrap } from "../workspace/command-runner.js";
import type { Logger } from "../workflow/deps.js";

/** A process that must run agent commands in bubblewrap cannot: its message is the one thing to print. */
export class SandboxUnavailable extends ConfigError {}

/**
 * `npm start` and `npm run worker`, before anything listens or is forked: a service fails closed.
 * Short of `BLUEPRINT_SANDBOX=none`, bubblewrap must build the sandbox here, and `auto` means `bwrap`
 * (it falls back only for a person's own CLI run or the Action's throwaway runner). The bubblewrap
 * that passed goes to every process forked from here on (`BLUEPRINT_SANDBOX_CHECKED` in
 * `processEnv`): they use it without probing again and can never fall back. Throws SandboxUnavailable.
 * `processEnv` is written, not read: it is what the children of this process inherit, so it is this
 * process's own environment unless a test passes another.
 */
export function requireSandbox(env: BlueprintEnv, processEnv: NodeJS.ProcessEnv = process.env): BlueprintEnv {
  if (env.BLUEPRINT_SANDBOX === "none" || env.BLUEPRINT_SANDBOX_CHECKED) return env;
  const check = checkBubblewrap();
  if ("problem" in check) throw new SandboxUnavailable(sandboxRefusal(check.problem));
  processEnv.BLUEPRINT_SANDBOX_CHECKED = check.path;
  return { ...env, BLUEPRINT_SANDBOX_CHECKED: check.path };
}

/** requireSandbox for an entry that has no one to hand the refusal to: its message on stderr, alone, and exit 1. */
export function requireSandboxOrExit(env: BlueprintEnv): BlueprintEnv {
  try {
    return requireSandbox(env);
  } catch (error) {
    if (!(error instanceof SandboxUnavailable)) throw error;
    process.stderr.write(`blueprint: ${error.message}\n`);
    process.exit(1);
  }
}

/** Why bubblewrap cannot hold agent commands here, for setup mode to warn about; null when it can or is not wanted. */
export function sandboxProblem(mode: string | undefined): string | null {
  if (mode === "none") return null;
  const check = checkBubblewrap();
  return "problem" in check ? sandboxRefusal(check.problem) : null;
}

/**
 * Where this process runs agent commands: the bubblewrap path, or null for the plain runner. `none`:
 * the plain runner, because the operator said so (every build report says it too, workflow/build/report.ts).
 * `bwrap`: inside bubblewrap, or this throws. `auto`: bubblewrap when it works here, else the plain
 * runner with a warning. A bubblewrap its parent checked (requireSandbox) is used as it is.
 */
export function sandboxFor(
  env: Pick<BlueprintEnv, "BLUEPRINT_SANDBOX" | "BLUEPRINT_SANDBOX_CHECKED">,
  log: Logger,
): string | null {
  if (env.BLUEPRINT_SANDBOX === "none") {
    log.warn(
      {},
      "BLUEPRINT_SANDBOX=none: agent commands run WITHOUT a sandbox, as this process's user, with only a scrubbed environment, a timeout and an output cap; they can read this process's files and environment",
    );
    return null;
  }
  const check = env.BLUEPRINT_SANDBOX_CHECKED ? { path: env.BLUEPRINT_SANDBOX_CHECKED } : checkBubblewrap();
  if ("problem" in check) {
    // An operator who did not say otherwise must not get commands run without the sandbox.
    if (env.BLUEPRINT_SANDBOX === "bwrap") throw new SandboxUnavailable(sandboxRefusal(check.problem));
    log.warn(
      {},
      `${check.problem}; agent commands fall back to the plain runner (scrubbed environment, timeout, output cap; no isolation)`,
    );
    return null;
  }
  log.info(
    { bwrap: check.path },
    "agent commands run inside bubblewrap: system directories read-only, their own worktree writable, private /tmp, HOME and /proc, a network of their own whose only way out is the job's allow-list proxy",
  );
  return check.path;
}

/** What to do about a missing or broken bubblewrap, and what the way around it would expose, in one paragraph. */
function sandboxRefusal(problem: string): string {
  return (
    `agent commands need the bubblewrap sandbox, but ${problem}. ` +
    "Install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; in a container, start it with the options in the Dockerfile's comments: unprivileged user namespaces and a mountable /proc). " +
    "To run agent commands without a sandbox instead, set BLUEPRINT_SANDBOX=none: they then run as this process's user and can read everything it can, " +
    "its environment and files (the model key, the App's private key and webhook secret where it holds them) and every other job's workspace."
  );
}
