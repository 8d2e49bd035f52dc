/**
 * Blueprint's check runs as GitHub shows them: their names (fixed: rulesets require them by name), the
 * external id that binds a check run to its thread and plan revision, and the plan check's buttons.
 */

export const PLAN_CHECK_NAME = "Blueprint plan";
export const BUILD_CHECK_NAME = "Blueprint build";

/** The `requested_action` identifiers of the plan check's buttons (fixed: `build` and `revise`). */
export type PlanCheckAction = "build" | "revise";

/**
 * What a check run's external id says: which kind, on which issue or pull request, for which plan revision, and (a
 * plan check made since it was recorded) the hash of the plan its summary shows.
 */
export interface CheckRunBinding {
  kind: "plan" | "build";
  number: number;
  revision: number;
  planHash?: string | undefined;
}

/**
 * `blueprint-plan:#12:v3:0123456789abcdef`: the thread, revision and plan a click is bound to (the identifier itself
 * is only `build` or `revise`). A check run's external id is set when it is made and never changed, so the hash stays
 * that of the plan its summary shows, however the plan is edited after.
 */
export function checkRunExternalId(binding: CheckRunBinding): string {
  const hash = binding.planHash ? `:${binding.planHash}` : "";
  return `blueprint-${binding.kind}:#${binding.number}:v${binding.revision}${hash}`;
}

export function parseCheckRunExternalId(externalId: string | null | undefined): CheckRunBinding | null {
  const match = /^blueprint-(plan|build):#(\d{1,9}):v(\d{1,6})(?::([0-9a-f]{16}))?$/.exec(externalId ?? "");
  if (!match) return null;
  return {
    kind: match[1] === "plan" ? "plan" : "build",
    number: Number(match[2]),
    revision: Number(match[3]),
    ...(match[4] ? { planHash: match[4] } : {}),
  };
}

/**
 * Whether a check run's external id is the check `wanted` names: the same kind, thread and revision, whatever plan
 * hash either carries (a revision's check is found to settle it after its plan was edited).
 */
export function sameCheckRun(externalId: string | null | undefined, wanted: string): boolean {
  const found = parseCheckRunExternalId(externalId);
  const sought = parseCheckRunExternalId(wanted);
  if (!found || !sought) return externalId === wanted;
  return found.kind === sought.kind && found.number === sought.number && found.revision === sought.revision;
}

/**
 * GitHub's limits on a check run's buttons: label ≤ 20 characters, identifier ≤ 20, description ≤ 40; at most 3
 * buttons.
 */
export const ACTION_LIMITS = { label: 20, identifier: 20, description: 40, count: 3 } as const;

export interface CheckRunButton {
  label: string;
  identifier: PlanCheckAction;
  description: string;
}

/**
 * The plan check's buttons for one revision, cut to GitHub's limits (a revision past v99999999 gets a shorter label).
 */
export function planCheckButtons(revision: number): CheckRunButton[] {
  const build = `Build plan v${revision}`;
  return [
    {
      label: build.length <= ACTION_LIMITS.label ? build : "Build this plan",
      identifier: "build",
      description: `Approve and build plan v${revision}`.slice(0, ACTION_LIMITS.description),
    },
    { label: "Revise", identifier: "revise", description: "Ask for changes before it is built" },
  ];
}
