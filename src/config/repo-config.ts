import { LineCounter, Parser, parseDocument, type CST } from "yaml";
import { positionAt, positionOf, type SourcePosition } from "./yaml-position.js";
import { z } from "zod";
import { PERMISSION_LEVELS } from "../github/permission.js";
import { priceTableSchema } from "../shared/model-usage.js";
import { parseEgressEntry, type NetworkSetting } from "../workspace/egress-policy.js";

export const REPO_CONFIG_PATH = ".github/blueprint.yml";

/** Who may approve a plan: anyone allowed to command Blueprint, or only the code owners of the files it changes. */
export const APPROVERS = ["write", "codeowners"] as const;

/**
 * The thread states a label can show (`blueprint: planned` …); workflow/surfaces/labels.ts gives their default names and
 * colours.
 */
export const LABELED_STATES = ["planned", "approved", "building", "built", "failed"] as const;
export type LabeledState = (typeof LABELED_STATES)[number];

/**
 * `.github/blueprint.yml`, read from the default branch only. The descriptions are what editors show
 * through schema/blueprint.schema.json (`npm run schema` writes it from this schema).
 */
export const repoConfigSchema = z
  .object({
    model: z
      .string()
      .min(1)
      .optional()
      .describe("The model for this repository, instead of the App's BLUEPRINT_MODEL."),
    models: z
      .array(z.string().min(1).max(200).regex(/^\S+$/, "a model name has no spaces"))
      .min(1)
      .max(50)
      .optional()
      .describe(
        "The models `/plan --model NAME` may pick, exactly as the endpoint names them; that plan's revisions and its build use the model picked. Without this list `/plan --model` is refused.",
      ),
    min_permission: z
      .enum(PERMISSION_LEVELS)
      .optional()
      .describe(
        "The least permission that may command Blueprint here; it can raise the App's minimum, never lower it.",
      ),
    require_other_approver: z.boolean().default(false).describe("The plan's requester may not approve their own plan."),
    approvers: z
      .enum(APPROVERS)
      .default("write")
      .describe(
        "Whose /build or approving review counts: `write` (anyone allowed to command Blueprint) or `codeowners` (only an owner, per the default branch's CODEOWNERS, of at least one file of each step built).",
      ),
    feedback: z
      .enum(["any-comment", "command-only"])
      .default("any-comment")
      .describe("Whether plain comments revise a pending plan, or only /revise and reviews."),
    follow_up: z
      .enum(["build", "plan", "off"])
      .default("build")
      .describe(
        "Once a plan is built, what a review (`changes_requested` or `commented`) or `/fix` on its pull request does: `build` fix-up steps F1, F2… on the same branch at once (the review is the approval), `plan` post them and wait for `/fix`, or `off`.",
      ),
    resolve_threads: z
      .boolean()
      .default(false)
      .describe("Also resolve the review threads a follow-up addressed (it always replies in them)."),
    ci_fix: z
      .enum(["suggest", "build", "off"])
      .default("suggest")
      .describe(
        "When checks fail on the head of a built plan's pull request: `suggest` comment with the failing checks, the model's diagnosis and the fix-up steps, which wait for `/fix`; `build` build them at once; or `off`.",
      ),
    ci_fix_attempts: z
      .number()
      .int()
      .min(0)
      .max(10)
      .default(2)
      .describe("The most fix-up builds failing checks start by themselves on one pull request (`ci_fix: build`)."),
    setup: z.string().min(1).optional().describe("A command run once before the steps are built, e.g. `npm ci`."),
    test: z
      .string()
      .min(1)
      .optional()
      .describe("A command run after the last step, with the plan's verification commands."),
    branch_prefix: z
      .string()
      .regex(/^[A-Za-z0-9._/-]+$/, "use letters, digits, '.', '_', '-' and '/'")
      .refine((prefix) => !prefix.includes(".."), "must not contain '..'")
      .default("blueprint/")
      .describe("Build branches are named <prefix>issue-<number>."),
    commit_author: z
      .object({ name: z.string().min(1), email: z.string().email() })
      .strict()
      .optional()
      .describe("The author of Blueprint's commits, instead of the App's bot identity."),
    limits: z
      .object({
        max_iterations: z
          .number()
          .int()
          .positive()
          .max(500)
          .optional()
          .describe("Model turns per planning run or build step."),
        max_minutes: z
          .number()
          .int()
          .positive()
          .max(240)
          .optional()
          .describe("Minutes per planning run or build step."),
        max_tokens: z.number().int().positive().optional().describe("Tokens per planning run or build step."),
        max_cost: z
          .number()
          .positive()
          .optional()
          .describe(
            "Dollars per build (each /build), counted with `prices`; the diagnosis of failing checks and the fix built after it share one. Without a price for the model it cannot be enforced, and the build report says so.",
          ),
      })
      .strict()
      .default({})
      .describe("Caps per run; they can only lower the App's own limits."),
    prices: priceTableSchema
      .optional()
      .describe(
        "Dollars per million tokens, per model name (exactly as in `model:`): `input`, `cached_input`, `output`. Plan comments and build reports show costs with them; the App's own prices (BLUEPRINT_PRICES) win for the models they name.",
      ),
    instructions: z
      .string()
      .max(20_000)
      .optional()
      .describe("Extra instructions for the agent, e.g. the project's conventions."),
    network: networkSchema(),
    labels: labelsSchema(),
  })
  .strict();

export type RepoConfig = z.output<typeof repoConfigSchema>;

/**
 * `network:`: what the agent's commands may reach, through Blueprint's proxy, within the App's
 * BLUEPRINT_NETWORK_ALLOW. Never the host's own network.
 */
function networkSchema() {
  const entry = z.string().transform((text, context) => {
    const parsed = parseEgressEntry(text);
    if (parsed.ok) return parsed.entry;
    context.addIssue({
      code: "custom",
      message: `${parsed.message}; write a host name, "host:port", "*.suffix" or "address:port"`,
    });
    return z.NEVER;
  });
  const setting = z.union(
    [
      z.boolean().transform((on): NetworkSetting => (on ? "registries" : "none")),
      z.enum(["none", "registries"]),
      z
        .object({
          allow: z
            .array(entry)
            .max(200)
            .describe(
              'Hosts commands may reach: "host", "host:port", "*.suffix" (any name below it) or "address:port".',
            ),
        })
        .strict(),
    ],
    {
      error: () =>
        'use `none`, `registries`, `true` (registries), `false` (none) or `{ allow: [host, "host:port", "*.suffix", "address:port"] }`',
    },
  );
  return setting
    .default("none")
    .describe(
      "What the agent's commands may reach, only through Blueprint's allow-list proxy and within the App's BLUEPRINT_NETWORK_ALLOW: `none` (default), `registries` (the common package registries; `true` is the same), or `{ allow: [...] }`. Never the host's own network.",
    );
}

/**
 * `labels:`: the one label a thread carries for its state. Absent or `true`: the default names;
 * `false`: none at all; a map renames a state's label (`built: "done by bot"`) or switches it off (`failed: false`).
 */
function labelsSchema() {
  // GitHub's limit on a label's name.
  const name = z.union([z.string().trim().min(1).max(50), z.literal(false)]).optional();
  const renamed = z
    .object(
      Object.fromEntries(
        LABELED_STATES.map((state) => [state, name.describe(`The label for "${state}", or false for none.`)]),
      ) as Record<LabeledState, typeof name>,
    )
    .strict()
    .superRefine((names, context) => {
      const given = Object.values(names)
        .filter((value): value is string => typeof value === "string")
        .map((value) => value.toLowerCase());
      // GitHub's label names ignore case: two states under one label could never be told apart.
      const twice = given.find((value, index) => given.indexOf(value) !== index);
      if (twice)
        context.addIssue({
          code: "custom",
          message: `"${twice}" names two states; each state needs a label of its own`,
        });
    });
  return z
    .union([z.boolean(), renamed], {
      error: () =>
        'use `true` (the default names), `false` (no labels) or a map such as `{ built: "shipped", failed: false }`',
    })
    .optional()
    .describe(
      "The label that shows a thread's state (one at a time): `blueprint: planned`, `blueprint: approved`, `blueprint: building`, `blueprint: built`, `blueprint: failed`. `false` switches labels off; a map renames a state's label or switches it off (`failed: false`).",
    );
}

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
    return {
      ok: false,
      message: `${REPO_CONFIG_PATH} is ${text.length} characters long; the limit is ${MAX_REPO_CONFIG_CHARS}.`,
    };
  }
  if (nestingDepth(text) > MAX_REPO_CONFIG_DEPTH) {
    return {
      ok: false,
      message: `${REPO_CONFIG_PATH} nests lists and maps more than ${MAX_REPO_CONFIG_DEPTH} levels deep; the configuration needs two.`,
    };
  }
  const counter = new LineCounter();
  // prettyErrors off: the message stays one line, and the position is named below in the same words as schema problems.
  const doc = parseDocument(text, { lineCounter: counter, prettyErrors: false, uniqueKeys: true, logLevel: "error" });
  const syntaxError = doc.errors[0];
  if (syntaxError) {
    const reason = syntaxError.message.split("\n")[0] ?? syntaxError.code;
    return {
      ok: false,
      message: `${REPO_CONFIG_PATH} is not valid YAML ${where(positionAt(counter, syntaxError.pos[0]))}: ${reason}`,
    };
  }
  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: 100 });
  } catch (error) {
    const reason = error instanceof Error ? error.message.split("\n")[0] : String(error);
    return { ok: false, message: `${REPO_CONFIG_PATH} is not valid YAML: ${reason}` };
  }
  if (data === null || data === undefined) return { ok: true, config: DEFAULT_REPO_CONFIG };
  const parsed = repoConfigSchema.safeParse(data);
  if (!parsed.success) {
    const problems = parsed.error.issues.flatMap(unionBranchIssues).flatMap((issue) => {
      if (issue.code === "unrecognized_keys") {
        return issue.keys.map(
          (key) =>
            `\`${[...issue.path, key].join(".")}\` ${where(positionOf(doc, counter, issue.path, key))}: unknown key`,
        );
      }
      return [
        `\`${issue.path.join(".") || "(top level)"}\` ${where(positionOf(doc, counter, issue.path))}: ${issue.message}`,
      ];
    });
    return { ok: false, message: `${REPO_CONFIG_PATH} has problems:\n- ${problems.join("\n- ")}` };
  }
  return { ok: true, config: parsed.data };
}

/**
 * A value of one of a union's shapes (an object for `network:`) that fails inside: its own problems,
 * with their paths, instead of the union's summary.
 */
function unionBranchIssues(issue: z.core.$ZodIssue): z.core.$ZodIssue[] {
  if (issue.code !== "invalid_union") return [issue];
  const matched = issue.errors.filter(
    (branch) =>
      !branch.some(
        (inner) => inner.path.length === 0 && (inner.code === "invalid_type" || inner.code === "invalid_value"),
      ),
  );
  const [only] = matched;
  if (matched.length !== 1 || !only) return [issue];
  return only.map((inner) => ({ ...inner, path: [...issue.path, ...inner.path] }));
}

function where(position: SourcePosition | null): string {
  return position ? `(line ${position.line}, column ${position.column})` : "(position unknown)";
}

/**
 * The deepest nesting of collections in any document, from the library's concrete syntax tree, which it builds without
 * recursing.
 */
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
