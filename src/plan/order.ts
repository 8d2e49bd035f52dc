import type { Plan, PlanStep } from "./schema.js";

const byId = (a: string, b: string) => stepNumber(a) - stepNumber(b) || a.localeCompare(b);
const stepNumber = (id: string) => Number(id.replace(/^\D+/, "")) || 0;

/** Steps in dependency order; among steps that are ready at the same time, the lower id first. */
export function buildOrder(plan: Plan): PlanStep[] {
  const remaining = new Map(plan.steps.map((step) => [step.id, step]));
  const done = new Set<string>();
  const ordered: PlanStep[] = [];
  while (remaining.size > 0) {
    const ready = [...remaining.values()]
      .filter((step) => step.deps.every((dep) => done.has(dep) || !remaining.has(dep)))
      .sort((a, b) => byId(a.id, b.id));
    const next = ready[0];
    if (!next) throw new Error("the plan's dependencies form a cycle");
    ordered.push(next);
    done.add(next.id);
    remaining.delete(next.id);
  }
  return ordered;
}

/** The named steps plus every step they depend on, transitively, in build order. */
export function withDependencies(plan: Plan, ids: string[]): PlanStep[] {
  const byStepId = new Map(plan.steps.map((step) => [step.id, step]));
  const wanted = new Set<string>();
  const add = (id: string) => {
    if (wanted.has(id)) return;
    const step = byStepId.get(id);
    if (!step) return;
    wanted.add(id);
    step.deps.forEach(add);
  };
  ids.forEach(add);
  return buildOrder(plan).filter((step) => wanted.has(step.id));
}
