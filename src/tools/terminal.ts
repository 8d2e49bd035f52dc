import { z } from "zod";
import { defineTool, toolError } from "./tool.js";
import { validatePlan } from "../plan/validate.js";
import { planSchema } from "../plan/schema.js";

export const submitPlanTool = defineTool({
  name: "submit_plan",
  description:
    "Submit the final plan for the maintainers to review. Call it once, when the plan is complete. Steps have ids S1, S2, …; deps name earlier steps; files are paths relative to the repository root.",
  schema: planSchema,
  modes: ["plan"],
  async run(args) {
    const checked = validatePlan(args);
    if (!checked.ok) {
      return toolError(`the plan was not accepted. Fix these problems and call submit_plan again:\n- ${checked.errors.join("\n- ")}`);
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
    return { content: "Question posted; waiting for the answer.", ending: { kind: "question", question: args.question } };
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
      return toolError(`you are working on step ${context.stepId}, not ${args.step_id}; call complete_step with step_id "${context.stepId}" when it is done`);
    }
    if (args.outcome === "blocked") {
      return { content: "Step reported as blocked; the build stops here.", ending: { kind: "step_blocked", stepId: args.step_id, reason: args.summary } };
    }
    return {
      content: "Step completed.",
      ending: { kind: "step_completed", stepId: args.step_id, summary: args.summary },
    };
  },
});
