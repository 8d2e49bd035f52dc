import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { z } from "zod";
import { defineTool, toolError } from "./tool.js";
import { validatePlan } from "../plan/validate.js";
import { planSchema, type Plan } from "../plan/schema.js";
import { proseVerificationError, whyNotACommand } from "../plan/verification.js";

const execFileAsync = promisify(execFile);

export const submitPlanTool = defineTool({
  name: "submit_plan",
  description:
    "Submit the final plan for the maintainers to review. Call it once, when the plan is complete. Steps have ids S1, S2, …; deps name earlier steps; files are paths relative to the repository root. verification holds only shell commands, which Blueprint runs after the last step; checks for people go in manual_checks.",
  schema: planSchema,
  modes: ["plan"],
  async run(args) {
    const checked = validatePlan(args);
    const errors = checked.ok ? await verificationErrors(checked.plan) : checked.errors;
    if (!checked.ok || errors.length > 0) {
      return toolError(
        `the plan was not accepted. Fix these problems and call submit_plan again:\n- ${errors.join("\n- ")}`,
      );
    }
    return { content: "Plan submitted for review.", ending: { kind: "plan_submitted", plan: checked.plan } };
  },
});

export const askUserTool = defineTool({
  name: "ask_user",
  description:
    "Ask the maintainers a question when something essential is unclear. The run pauses until they answer on GitHub; use it sparingly.",
  schema: z.object({ question: z.string().trim().min(1).max(4000) }),
  modes: ["plan", "build"],
  async run(args) {
    return {
      content: "Question posted; waiting for the answer.",
      ending: { kind: "question", question: args.question },
    };
  },
});

export const completeStepTool = defineTool({
  name: "complete_step",
  description:
    'End the current step. outcome "done" (the default): the step is done; Blueprint commits and pushes your changes and ticks the step. ' +
    'outcome "blocked": you could not do the step; say why in summary, and the build stops there with your reason shown to the maintainers.',
  schema: z.object({
    step_id: z.string().trim().min(1),
    summary: z.string().trim().min(1).max(4000),
    outcome: z.enum(["done", "blocked"]).nullish(),
  }),
  modes: ["build"],
  async run(args, context) {
    if (context.stepId && args.step_id !== context.stepId) {
      return toolError(
        `you are working on step ${context.stepId}, not ${args.step_id}; call complete_step with step_id "${context.stepId}" when it is done`,
      );
    }
    if (args.outcome === "blocked") {
      return {
        content: "Step reported as blocked; the build stops here.",
        ending: { kind: "step_blocked", stepId: args.step_id, reason: args.summary },
      };
    }
    return {
      content: "Step completed.",
      ending: { kind: "step_completed", stepId: args.step_id, summary: args.summary },
    };
  },
});

/** Entries of `verification` that are not runnable commands: prose, or what bash cannot parse. */
async function verificationErrors(plan: Plan): Promise<string[]> {
  const errors: string[] = [];
  for (const [index, entry] of plan.verification.entries()) {
    const why = whyNotACommand(entry) ?? (await bashSyntaxError(entry));
    if (why) errors.push(proseVerificationError(index, entry, why));
  }
  return errors;
}

/** What `bash -n` (parse, never run) says of a command, or null when it parses or bash is not at hand. */
async function bashSyntaxError(command: string): Promise<string | null> {
  try {
    await execFileAsync("bash", ["-n", "-c", command], { timeout: 5000, env: { PATH: process.env.PATH ?? "" } });
    return null;
  } catch (error) {
    const failure = error as { code?: unknown; killed?: boolean; stderr?: string };
    if (failure.code === "ENOENT" || failure.killed) return null;
    const said =
      (failure.stderr ?? "")
        .trim()
        .split("\n")[0]
        ?.replace(/^bash: (?:-c: )?(?:line \d+: )?/, "") ?? "";
    return `bash cannot parse it (${said || "a syntax error"})`;
  }
}
