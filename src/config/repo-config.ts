import { parse as parseYaml } from "yaml";
import { z } from "zod";
import { PERMISSION_LEVELS } from "../github/permission.js";

export const REPO_CONFIG_PATH = ".github/blueprint.yml";

/** `.github/blueprint.yml`, read from the default branch only. */
export const repoConfigSchema = z
  .object({
    model: z.string().min(1).optional(),
    min_permission: z.enum(PERMISSION_LEVELS).optional(),
    require_other_approver: z.boolean().default(false),
    feedback: z.enum(["any-comment", "command-only"]).default("any-comment"),
    setup: z.string().min(1).optional(),
    test: z.string().min(1).optional(),
    branch_prefix: z
      .string()
      .regex(/^[A-Za-z0-9._/-]+$/, "use letters, digits, '.', '_', '-' and '/'")
      .refine((prefix) => !prefix.includes(".."), "must not contain '..'")
      .default("blueprint/"),
    commit_author: z.object({ name: z.string().min(1), email: z.string().email() }).strict().optional(),
    limits: z
      .object({
        max_iterations: z.number().int().positive().max(500).optional(),
        max_minutes: z.number().int().positive().max(240).optional(),
        max_tokens: z.number().int().positive().optional(),
      })
      .strict()
      .default({}),
    instructions: z.string().max(20_000).optional(),
    /** Let agent commands reach the network when they run inside the sandbox (e.g. to install packages). */
    network: z.boolean().default(false),
  })
  .strict();

export type RepoConfig = z.output<typeof repoConfigSchema>;

export const DEFAULT_REPO_CONFIG: RepoConfig = repoConfigSchema.parse({});

export type RepoConfigRead = { ok: true; config: RepoConfig } | { ok: false; message: string };

export function parseRepoConfig(text: string | null): RepoConfigRead {
  if (text === null || text.trim() === "") return { ok: true, config: DEFAULT_REPO_CONFIG };
  let data: unknown;
  try {
    data = parseYaml(text, { maxAliasCount: 100 });
  } catch (error) {
    const reason = error instanceof Error ? error.message.split("\n")[0] : String(error);
    return { ok: false, message: `${REPO_CONFIG_PATH} is not valid YAML: ${reason}` };
  }
  if (data === null || data === undefined) return { ok: true, config: DEFAULT_REPO_CONFIG };
  const parsed = repoConfigSchema.safeParse(data);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `\`${issue.path.join(".") || "(top level)"}\`: ${issue.message}`);
    return { ok: false, message: `${REPO_CONFIG_PATH} has problems:\n- ${problems.join("\n- ")}` };
  }
  return { ok: true, config: parsed.data };
}
