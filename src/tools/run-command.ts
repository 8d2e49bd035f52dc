import { z } from "zod";
import { MIN_COMMAND_MS, timeLeft } from "../shared/deadline.js";
import { defineTool, toolError } from "./tool.js";

const DEFAULT_TIMEOUT_S = 120;

export const runCommandTool = defineTool({
  name: "run_command",
  description:
    "Run a shell command (bash) in the repository root, e.g. to build or test. It has a timeout (timeout_s, default 120; never past the run's time limit), a capped output and no network credentials; it reaches only the hosts the repository allows, through the proxy named in HTTPS_PROXY (often none). " +
    "In the sandbox /tmp is private to each call: empty at its start, wiped after it; background processes end with the call. Files that must last between calls (a stand-in script, a log) go in $BLUEPRINT_SCRATCH, a directory outside the repository (never committed) that lasts until the step ends.",
  schema: z.object({ command: z.string().min(1), timeout_s: z.number().positive().max(600).nullish() }),
  modes: ["build"],
  async run(args, context) {
    const wanted = (args.timeout_s ?? DEFAULT_TIMEOUT_S) * 1000;
    // No command outlives the run: its timeout is capped at the time the run has left.
    const left = timeLeft(context.deadline);
    const timeoutMs = Math.min(wanted, left);
    if (left < MIN_COMMAND_MS) {
      context.audit.push({
        action: "command",
        target: args.command,
        exitCode: null,
        detail: "not run: the run's time limit was reached",
      });
      return toolError(
        'the command was not run: the run\'s time limit is reached. Call complete_step now (outcome "blocked" if the step is not done).',
      );
    }
    const result = await context.runner.run(args.command, {
      cwd: context.root,
      ...(context.network ? { network: context.network } : {}),
      ...(context.signal ? { signal: context.signal } : {}),
      ...(context.scratchDir ? { scratch: context.scratchDir } : {}),
      timeoutMs,
    });
    const capped = timeoutMs < wanted;
    context.audit.push({
      action: "command",
      target: args.command,
      exitCode: result.exitCode,
      ...(result.timedOut && capped ? { detail: "stopped at the run's time limit" } : {}),
    });
    const status = result.timedOut
      ? `${capped ? "stopped at the run's time limit" : "timed out"} after ${Math.round(result.durationMs / 1000)} s and was killed`
      : `exit code ${result.exitCode ?? `signal ${result.signal}`}`;
    const body = `$ ${args.command}\n[${status}]\n${result.output}`;
    return { content: result.exitCode === 0 ? body : `Error: the command failed (${status}).\n${body}` };
  },
});
