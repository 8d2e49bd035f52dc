import { z } from "zod";

/** Optional model-facing fields may arrive as `null` or be absent (the model-facing tools' contract). */
const optionalText = z
  .string()
  .nullish()
  .transform((value) => (value === null || value === undefined || value.trim() === "" ? undefined : value));

export const complexitySchema = z.enum(["low", "medium", "high"]);

export const planStepSchema = z.object({
  id: z
    .string()
    .trim()
    .regex(/^S\d{1,3}$/, 'step ids look like "S1", "S2", …'),
  title: z.string().trim().min(1, "a step needs a title").max(200),
  details: z.string().max(20_000).default(""),
  files: z.array(z.string().trim().min(1)).max(100).default([]),
  deps: z.array(z.string().trim()).max(30).default([]),
  risk: optionalText,
  complexity: complexitySchema.nullish().transform((value) => value ?? undefined),
});

export const planSchema = z.object({
  title: z.string().trim().min(1, "the plan needs a title").max(200),
  summary: z.string().trim().min(1, "the plan needs a summary").max(20_000),
  steps: z.array(planStepSchema),
  risks: z
    .array(z.string().trim().min(1))
    .max(50)
    .nullish()
    .transform((value) => value ?? []),
  notes: z
    .string()
    .max(20_000)
    .nullish()
    .transform((value) => (value && value.trim() ? value.trim() : undefined))
    .describe(
      "What the build needs from your exploration: where things are (paths, functions), conventions, how to run the tests, pitfalls. The build's agents see only each step's details and these notes, never your exploration.",
    ),
  verification: z
    .array(z.string().trim().min(1))
    .max(50)
    .nullish()
    .transform((value) => value ?? [])
    .describe(
      'Shell commands Blueprint runs after the last step, each exactly as typed in bash at the repository root (e.g. "npm test", "npx jest test/option.test.js"). Only runnable commands: no prose, no comments; a failing one marks the build as failed verification.',
    ),
  manual_checks: z
    .array(z.string().trim().min(1))
    .max(20)
    .nullish()
    .transform((value) => (value && value.length > 0 ? value : undefined))
    .describe(
      'Checks for people to do by hand (Blueprint never runs these), e.g. "open the settings page and check the new toggle".',
    ),
  questions: z
    .array(z.string().trim().min(1))
    .max(20)
    .nullish()
    .transform((value) => value ?? undefined)
    .describe(
      "Open questions for the maintainers that the plan settles one way for now (say which in the step). They do NOT block /build: the plan is built as written unless the maintainers answer with /revise or in /build's notes. A question that must be answered before any plan can be made is asked with ask_user instead.",
    ),
});

export type PlanStep = z.output<typeof planStepSchema>;
export type Plan = z.output<typeof planSchema>;
export type Complexity = z.output<typeof complexitySchema>;
