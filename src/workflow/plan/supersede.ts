import type { Redactor } from "../../agent/redact.js";
import { commentSeal, type ThreadSeal } from "../../github/state-marker.js";
import { renderPlanComment, type ThreadStateRecord } from "../../github/plan-comment.js";
import type { ThreadPort } from "../ports.js";

/** Marks an older plan comment as superseded by a newer revision: edited header, then minimized as outdated. */
export async function supersede(
  port: ThreadPort,
  seal: ThreadSeal,
  record: ThreadStateRecord,
  by: number,
  redact: Redactor,
): Promise<void> {
  if (!record.state.plan || record.state.status === "superseded") return;
  const state = { ...record.state, status: "superseded" as const, updatedAt: new Date().toISOString() };
  await port.updateComment(
    record.comment.id,
    redact(
      renderPlanComment(state, commentSeal(seal, record.comment.id), {
        statusLine: `> 🗄️ **Superseded by plan v${by}** (below). Only the latest revision can be built.`,
      }),
    ),
  );
  await port.minimizeComment(record.comment);
}
