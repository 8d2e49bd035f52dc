import { z } from "zod";
import type { Job } from "../jobs/job.js";
import type { RepositoryInfo } from "../workflow/ports.js";

// What the Action reads of the event file, whichever event it is: GitHub's webhook payload, validated.

export const userSchema = z.object({ login: z.string(), type: z.string() });

export const repositorySchema = z.object({
  name: z.string(),
  owner: z.object({ login: z.string() }),
  clone_url: z.string(),
  default_branch: z.string(),
  html_url: z.string(),
});

export class EventError extends Error {}

/** The payload as `schema` reads it, or an EventError naming what is not as GitHub sends it. */
export function parse<T>(schema: z.ZodType<T>, payload: unknown, name: string): T {
  const parsed = schema.safeParse(payload);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`).join("; ");
  throw new EventError(`the ${name} event payload is not what GitHub sends: ${problems}`);
}

/**
 * What the summary says was asked, and the job it asks for: null when it is not for Blueprint (a bot, a blank comment,
 * a plain review).
 */
export interface Asked {
  repo: RepositoryInfo;
  number: number;
  actor: string;
  job: Job | null;
}

/** Not an event Blueprint acts on (the workflow's `on:` is broader, the comment was edited, the checks passed). */
export interface Ignored {
  kind: "ignored";
  reason: string;
}
