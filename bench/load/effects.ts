// What each command should leave on GitHub, and how the app's replies are told apart.
import type { Tenant } from "./conditions.js";

export type ReplyKind = "help" | "status" | "refusal" | "plan-start" | "queued" | "failure" | "other";
export const classify = (body: string): ReplyKind =>
  body.startsWith("### Blueprint commands")
    ? "help"
    : body.startsWith("### Blueprint status")
      ? "status"
      : body.startsWith("Sorry @")
        ? "refusal"
        : body.includes("<!-- blueprint:state") || /^## ⏳ (Planning|Revising)/.test(body)
          ? "plan-start"
          : body.startsWith("Queued:")
            ? "queued"
            : body.startsWith("❌")
              ? "failure"
              : "other";

export function expected(tenant: Tenant) {
  const writers = tenant.commands.filter((c) => c.who === "writer");
  const plans = writers.filter((c) => c.kind === "plan");
  return {
    reactions: writers.map((c) => c.comment.id),
    status: writers.filter((c) => c.kind === "status").length,
    plans: plans.length,
    /** Each issue ends with the revision its last /plan made: Plan v<number of /plan on it>. */
    finalRevision: new Map(tenant.issues.map((issue) => [issue, plans.filter((c) => c.issue === issue).length])),
    refusals: tenant.commands.filter((c) => c.who === "reader").length,
  };
}

export const hasPlan = (bodies: string[], revision: number) =>
  bodies.some((body) => body.startsWith(`## 📋 Plan v${revision}`));

/** Cheap completeness check from the double's state, while waiting. */
export function effectsComplete(tenant: Tenant): boolean {
  const want = expected(tenant);
  const { state } = tenant.view;
  if (!want.reactions.every((id) => state.reactions.some((r) => r.commentId === id && r.content === "eyes")))
    return false;
  const replies = tenant.issues.flatMap((issue) => state.botComments(issue).map((c) => c.body));
  const n = (kind: ReplyKind) => replies.filter((body) => classify(body) === kind).length;
  const planned = [...want.finalRevision].every(
    ([issue, revision]) =>
      revision === 0 ||
      hasPlan(
        state.botComments(issue).map((c) => c.body),
        revision,
      ),
  );
  return n("status") >= want.status && n("refusal") >= want.refusals && planned;
}
