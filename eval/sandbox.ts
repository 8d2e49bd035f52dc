import { sandboxFor, SandboxUnavailable } from "../src/app/sandbox-choice.js";
import { parseNetworkCeiling, type EgressEntry } from "../src/workspace/egress-policy.js";

/**
 * Where the eval runs code it did not write: a task's dependency install (the dataset's `install`, a
 * package's lifecycle scripts), its tests and the hidden checks. The same choice as the engine's
 * (BLUEPRINT_SANDBOX, sandbox-choice.ts), made once from the eval's environment before any task.
 */
export interface EvalSandbox {
  /** bubblewrap's path; null: plainly, as BLUEPRINT_SANDBOX=none asks (or `auto` where bubblewrap does not work). */
  bwrap: string | null;
  /**
   * What an install may reach through its proxy: the package registries, held under BLUEPRINT_NETWORK_ALLOW (with its
   * `address:port` mirrors).
   */
  ceiling: readonly EgressEntry[];
}

const MODES = ["auto", "bwrap", "none"] as const;

/**
 * BLUEPRINT_SANDBOX (default `auto`, as the CLI's) and BLUEPRINT_NETWORK_ALLOW of `env`. Throws when
 * either is malformed, or when `bwrap` is asked for and bubblewrap cannot build the sandbox here:
 * nothing then runs, rather than run plainly. `warn` hears a fallback to running plainly.
 */
export function evalSandbox(env: NodeJS.ProcessEnv, warn: (text: string) => void): EvalSandbox {
  const mode = env.BLUEPRINT_SANDBOX || "auto";
  if (!(MODES as readonly string[]).includes(mode))
    throw new Error(`BLUEPRINT_SANDBOX is auto, bwrap or none, not "${mode}".`);
  const ceiling = parseNetworkCeiling(env.BLUEPRINT_NETWORK_ALLOW);
  if (!ceiling.ok) throw new Error(`BLUEPRINT_NETWORK_ALLOW: ${ceiling.message}`);
  const log = {
    info: () => undefined,
    error: () => undefined,
    warn: (_: object, message?: string) => warn(message ?? ""),
  };
  try {
    const bwrap = sandboxFor(
      {
        BLUEPRINT_SANDBOX: mode as (typeof MODES)[number],
        BLUEPRINT_SANDBOX_CHECKED: env.BLUEPRINT_SANDBOX_CHECKED || undefined,
      },
      log,
    );
    return { bwrap, ceiling: ceiling.entries };
  } catch (error) {
    if (!(error instanceof SandboxUnavailable)) throw error;
    throw new Error(
      `BLUEPRINT_SANDBOX=bwrap: no task was run, because the eval runs each task's install, tests and checks (and the CLI its agent's commands) only inside bubblewrap, and ${error.message}`,
      { cause: error },
    );
  }
}
