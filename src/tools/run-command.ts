import { z } from "zod";
import { defineTool } from "./tool.js";

export const runCommandTool = defineTool({
  name: "run_command",
  description:
    "Run a shell command (bash) in the repository root, e.g. to build or test. It has a timeout (timeout_s, default 120), a capped output and no network credentials.",
  schema: z.object({ command: z.string().min(1), timeout_s: z.number().positive().max(600).nullish() }),
  modes: ["build"],
  async run(args, context) {
    const result = await context.runner.run(args.command, {
      cwd: context.root,
      network: context.network ?? false,
      ...(context.signal ? { signal: context.signal } : {}),
      ...(args.timeout_s ? { timeoutMs: args.timeout_s * 1000 } : {}),
    });
    context.audit.push({ action: "command", target: args.command, exitCode: result.exitCode });
    const status = result.timedOut
      ? `timed out after ${Math.round(result.durationMs / 1000)} s and was killed`
      : `exit code ${result.exitCode ?? `signal ${result.signal}`}`;
    const body = `$ ${args.command}\n[${status}]\n${result.output}`;
    return { content: result.exitCode === 0 ? body : `Error: the command failed (${status}).\n${body}` };
  },
});
