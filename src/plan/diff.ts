import type { Plan, PlanStep } from "./schema.js";
import { oneLine } from "./render.js";

export interface RevisionDiff {
  added: PlanStep[];
  removed: PlanStep[];
  /** Steps that kept their place in the plan but changed; `fields` says what. */
  changed: Array<{ before: PlanStep; after: PlanStep; fields: string[] }>;
  /** Steps whose position relative to the others moved. */
  moved: PlanStep[];
  summaryChanged: boolean;
  verificationChanged: boolean;
}

/** What changed between two revisions, computed (never written by the model). */
export function diffPlans(before: Plan, after: Plan): RevisionDiff {
  const pairs = matchSteps(before.steps, after.steps);
  const matchedBefore = new Set(pairs.map(([b]) => b));
  const matchedAfter = new Set(pairs.map(([, a]) => a));
  const changed = pairs
    .map(([b, a]) => ({ before: b, after: a, fields: changedFields(b, a) }))
    .filter((entry) => entry.fields.length > 0);

  // A step moved when its order relative to the other matched steps differs.
  const oldIndex = new Map(before.steps.map((step, index) => [step, index]));
  const byNewOrder = [...pairs].sort((x, y) => after.steps.indexOf(x[1]) - after.steps.indexOf(y[1]));
  const sequence = byNewOrder.map(([b]) => oldIndex.get(b) ?? 0);
  const keep = longestIncreasing(sequence);
  const moved = byNewOrder.filter((_, index) => !keep.has(index)).map(([, a]) => a);

  return {
    added: after.steps.filter((step) => !matchedAfter.has(step)),
    removed: before.steps.filter((step) => !matchedBefore.has(step)),
    changed,
    moved,
    summaryChanged:
      normalise(before.summary) !== normalise(after.summary) || normalise(before.title) !== normalise(after.title),
    verificationChanged:
      [...before.verification, "", ...(before.manual_checks ?? [])].join("\n") !==
      [...after.verification, "", ...(after.manual_checks ?? [])].join("\n"),
  };
}

export function renderRevisionDiff(diff: RevisionDiff, previousRevision: number): string {
  const lines: string[] = [];
  for (const step of diff.added) lines.push(`- ➕ Added **${step.id}** ${oneLine(step.title)}`);
  for (const step of diff.removed) lines.push(`- ➖ Removed **${step.id}** ${oneLine(step.title)}`);
  for (const { before, after, fields } of diff.changed) {
    const label = before.id === after.id ? `**${after.id}**` : `**${before.id}** → **${after.id}**`;
    const title = fields.includes("title")
      ? `: “${oneLine(before.title)}” → “${oneLine(after.title)}”`
      : ` ${oneLine(after.title)}`;
    lines.push(`- ✏️ Changed ${label}${title} (${fields.join(", ")})`);
  }
  for (const step of diff.moved) lines.push(`- 🔀 Moved **${step.id}** ${oneLine(step.title)}`);
  if (diff.summaryChanged) lines.push("- 📝 Title or summary reworded");
  if (diff.verificationChanged) lines.push("- 🧪 Verification changed");
  if (lines.length === 0) lines.push("- No changes to the steps.");
  return `### What changed since v${previousRevision}\n${lines.join("\n")}`;
}

/** Pairs old and new steps: same id and a similar title first, then a similar title under another id. */
function matchSteps(before: PlanStep[], after: PlanStep[]): Array<[PlanStep, PlanStep]> {
  const pairs: Array<[PlanStep, PlanStep]> = [];
  const freeBefore = new Set(before);
  const freeAfter = new Set(after);
  const take = (b: PlanStep, a: PlanStep) => {
    pairs.push([b, a]);
    freeBefore.delete(b);
    freeAfter.delete(a);
  };
  for (const a of after) {
    const b = before.find((step) => freeBefore.has(step) && step.id === a.id && similar(step.title, a.title) >= 0.5);
    if (b) take(b, a);
  }
  // Renumbered steps: the most similar titles first.
  const candidates = [...freeAfter]
    .flatMap((a) => [...freeBefore].map((b) => ({ a, b, score: similar(b.title, a.title) })))
    .filter((candidate) => candidate.score >= 0.6)
    .sort((x, y) => y.score - x.score);
  for (const { a, b } of candidates) if (freeAfter.has(a) && freeBefore.has(b)) take(b, a);
  for (const a of [...freeAfter]) {
    const b = [...freeBefore].find(
      (step) => step.id === a.id && normalise(step.details) !== "" && normalise(step.details) === normalise(a.details),
    );
    if (b) take(b, a);
  }
  return pairs;
}

function changedFields(before: PlanStep, after: PlanStep): string[] {
  const fields: string[] = [];
  if (before.id !== after.id) fields.push("id");
  if (normalise(before.title) !== normalise(after.title)) fields.push("title");
  if (normalise(before.details) !== normalise(after.details)) fields.push("details");
  if ([...before.files].sort().join("\n") !== [...after.files].sort().join("\n")) fields.push("files");
  if ([...before.deps].sort().join(",") !== [...after.deps].sort().join(",")) fields.push("dependencies");
  return fields;
}

function normalise(text: string): string {
  return text.replace(/\s+/g, " ").trim().toLowerCase();
}

function similar(a: string, b: string): number {
  const words = (text: string) => new Set(normalise(text).split(" ").filter(Boolean));
  const left = words(a);
  const right = words(b);
  if (left.size === 0 && right.size === 0) return 1;
  const shared = [...left].filter((word) => right.has(word)).length;
  return (2 * shared) / (left.size + right.size);
}

/** Indexes of one longest strictly increasing subsequence (the steps that did not move). */
function longestIncreasing(values: number[]): Set<number> {
  const length = values.map(() => 1);
  const previous = values.map(() => -1);
  for (let i = 0; i < values.length; i++) {
    for (let j = 0; j < i; j++) {
      if ((values[j] ?? 0) < (values[i] ?? 0) && (length[j] ?? 0) + 1 > (length[i] ?? 0)) {
        length[i] = (length[j] ?? 0) + 1;
        previous[i] = j;
      }
    }
  }
  let best = -1;
  for (let i = 0; i < values.length; i++) if (best === -1 || (length[i] ?? 0) > (length[best] ?? 0)) best = i;
  const keep = new Set<number>();
  for (let i = best; i !== -1; i = previous[i] ?? -1) keep.add(i);
  return keep;
}
