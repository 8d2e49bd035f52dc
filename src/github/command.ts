export type Command =
  /**
   * `instructions`: the argument as written, a leading `--model NAME` included (a job carries it whole);
   * `parsePlanArgument` splits it where the plan is made.
   */
  | { name: "plan"; instructions: string }
  /** `notes`: the approver's words after the ids and flags (and on the lines after), for every step; "" when none. */
  | { name: "build"; steps: string[]; fresh: boolean; force: boolean; revision: number | null; notes: string }
  | { name: "revise"; feedback: string }
  /** `/fix [notes]`: a follow-up on a built plan's pull request; `notes` guide it ("" when none). */
  | { name: "fix"; notes: string }
  | { name: "cancel" }
  | { name: "status" }
  | { name: "help" };

export type CommandName = Command["name"];

export type ParsedComment =
  | { kind: "command"; command: Command }
  /** A command word with arguments we cannot accept, with the reason. */
  | { kind: "invalid"; name: CommandName; message: string }
  /** Looks like a mistyped command: answer with a short help. */
  | { kind: "typo"; word: string; suggestion: CommandName }
  /** Not addressed to Blueprint (plain text or an unrelated /word). */
  | { kind: "none" };

export const COMMAND_NAMES: readonly CommandName[] = ["plan", "build", "revise", "fix", "cancel", "status", "help"];

const MAX_COMMENT_CHARS = 65_536;

/** A command is the first non-blank line, `/word args…`, case-insensitive; later lines belong to the argument. */
export function parseComment(body: string | null | undefined): ParsedComment {
  const text = (body ?? "").slice(0, MAX_COMMENT_CHARS).replace(/\r\n?/g, "\n");
  const lines = text.split("\n");
  const first = lines.findIndex((line) => line.trim() !== "");
  if (first === -1) return { kind: "none" };
  const head = (lines[first] ?? "").trim();
  const match = /^\/([A-Za-z][\w-]*)(?:[ \t]+([\s\S]*))?$/.exec(head);
  if (!match) return { kind: "none" };
  const word = (match[1] ?? "").toLowerCase();
  const inline = (match[2] ?? "").trim();
  const rest = lines
    .slice(first + 1)
    .join("\n")
    .trim();
  const argument = [inline, rest].filter(Boolean).join("\n");

  switch (word) {
    case "plan": {
      const plan = parsePlanArgument(argument);
      if (!plan.ok) return { kind: "invalid", name: "plan", message: plan.message };
      return { kind: "command", command: { name: "plan", instructions: argument } };
    }
    case "revise":
      if (!argument)
        return {
          kind: "invalid",
          name: "revise",
          message: "`/revise` needs feedback, e.g. `/revise use the existing retry helper`.",
        };
      return { kind: "command", command: { name: "revise", feedback: argument } };
    case "build":
      return parseBuild(inline, rest);
    case "fix":
      return { kind: "command", command: { name: "fix", notes: argument } };
    case "cancel":
    case "status":
    case "help":
      return { kind: "command", command: { name: word } };
    default: {
      const suggestion = COMMAND_NAMES.find((name) => editDistance(name, word) <= (name.length > 4 ? 2 : 1));
      return suggestion ? { kind: "typo", word, suggestion } : { kind: "none" };
    }
  }
}

export type PlanArgument = { ok: true; model: string | null; instructions: string } | { ok: false; message: string };

/**
 * `/plan [--model NAME] [instructions]`: a model picked for this plan (only before the instructions,
 * so that instructions that mention a `--model` flag stay instructions), and the instructions.
 */
export function parsePlanArgument(argument: string): PlanArgument {
  const match = /^--model(?:=(\S*)|(?=\s|$)[ \t]*(\S*))[ \t]*/i.exec(argument);
  if (!match) return { ok: true, model: null, instructions: argument };
  const model = match[1] ?? match[2] ?? "";
  if (!model || model.startsWith("--"))
    return {
      ok: false,
      message:
        "`/plan --model` needs a model name, e.g. `/plan --model gpt-4.1 add retries`; the names this repository allows are its `models:` in `.github/blueprint.yml`.",
    };
  return { ok: true, model, instructions: argument.slice(match[0].length).replace(/^\n+/, "") };
}

/**
 * `/build [ids, vN, flags] [notes]`: the leading words are step ids, a revision and flags; from the
 * first other word on, the text (with the lines after the command) is the approver's notes for the build.
 * A word that looks like a flag but is none is refused, so a mistyped `--force` never becomes a note.
 */
function parseBuild(inline: string, rest: string): ParsedComment {
  const steps: string[] = [];
  let fresh = false;
  let force = false;
  let revision: number | null = null;
  let notes = "";
  for (const match of inline.matchAll(/[^\s,]+/g)) {
    const token = match[0];
    const lower = token.toLowerCase();
    if (lower === "--fresh") fresh = true;
    else if (lower === "--force") force = true;
    else if (/^s\d{1,3}$/i.test(token)) steps.push(token.toUpperCase());
    else if (/^v\d{1,4}$/i.test(token)) revision = Number(token.slice(1));
    else if (/^--?[a-z]/i.test(token)) {
      return {
        kind: "invalid",
        name: "build",
        message: `\`/build\` does not understand \`${token.slice(0, 40)}\`. Use \`/build\`, \`/build S2 S3\`, \`/build v2\`, \`/build --fresh\` or \`/build --force\`, then any notes for the build.`,
      };
    } else {
      notes = inline.slice(match.index).trim();
      break;
    }
  }
  notes = [notes, rest].filter(Boolean).join("\n");
  return { kind: "command", command: { name: "build", steps: [...new Set(steps)], fresh, force, revision, notes } };
}

/** Optimal string alignment distance: like Levenshtein, but swapping two neighbours is one edit. */
function editDistance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 2) return 99;
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  const at = (i: number, j: number) => d[i]?.[j] ?? 99;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, at(i - 2, j - 2) + 1);
      const row = d[i];
      if (row) row[j] = best;
    }
  }
  return at(a.length, b.length);
}
