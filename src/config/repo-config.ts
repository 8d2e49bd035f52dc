import { Parser, parse as parseYaml, type CST } from "yaml";
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

/**
 * The file comes from the repository, so its size and nesting are capped before the YAML library
 * composes it: deep nesting makes the library recurse until V8 aborts the process (a crash no
 * try/catch can stop). The configuration itself needs two levels.
 */
const MAX_REPO_CONFIG_CHARS = 64_000;
const MAX_REPO_CONFIG_DEPTH = 20;

export function parseRepoConfig(text: string | null): RepoConfigRead {
  if (text === null || text.trim() === "") return { ok: true, config: DEFAULT_REPO_CONFIG };
  if (text.length > MAX_REPO_CONFIG_CHARS) {
    return { ok: false, message: `${REPO_CONFIG_PATH} is ${text.length} characters long; the limit is ${MAX_REPO_CONFIG_CHARS}.` };
  }
  if (nestingDepth(text) > MAX_REPO_CONFIG_DEPTH) {
    return { ok: false, message: `${REPO_CONFIG_PATH} nests lists and maps more than ${MAX_REPO_CONFIG_DEPTH} levels deep; the configuration needs two.` };
  }
  let data: unknown;
  try {
    // logLevel "error": the library would otherwise print warnings, with the repository's text, to the server log.
    data = parseYaml(text, { maxAliasCount: 100, logLevel: "error" });
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

/** The deepest nesting of collections in any document, from the library's concrete syntax tree, which it builds without recursing. */
function nestingDepth(text: string): number {
  let deepest = 0;
  const pending: Array<{ token: CST.Token; depth: number }> = [];
  for (const token of new Parser().parse(text)) pending.push({ token, depth: 0 });
  for (let next = pending.pop(); next; next = pending.pop()) {
    const { token, depth } = next;
    if (token.type === "document") {
      if (token.value) pending.push({ token: token.value, depth });
    } else if (token.type === "block-map" || token.type === "block-seq" || token.type === "flow-collection") {
      deepest = Math.max(deepest, depth + 1);
      for (const item of token.items) {
        if ("key" in item && item.key) pending.push({ token: item.key, depth: depth + 1 });
        if (item.value) pending.push({ token: item.value, depth: depth + 1 });
      }
    }
  }
  return deepest;
}
