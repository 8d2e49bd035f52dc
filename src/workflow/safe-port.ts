import type { Redactor } from "../agent/redact.js";
import { fitComment } from "../github/comment-size.js";
import type { ThreadPort } from "./ports.js";

/** Every body Blueprint posts passes the redactor and fits GitHub's size limit, whichever use case wrote it. */
export function safePort(port: ThreadPort, redact: Redactor): ThreadPort {
  const clean = (body: string) => fitComment(redact(body));
  return {
    repo: port.repo,
    number: port.number,
    info: () => port.info(),
    comments: () => port.comments(),
    postComment: (body) => port.postComment(clean(body)),
    updateComment: (id, body) => port.updateComment(id, clean(body)),
    reactToComment: (id, reaction) => port.reactToComment(id, reaction),
    permission: (login) => port.permission(login),
    gitToken: () => port.gitToken(),
    commitUrl: (sha) => port.commitUrl(sha),
    upsertPullRequest: (draft) => port.upsertPullRequest({ ...draft, title: redact(draft.title), body: clean(draft.body) }),
    canWriteWorkflows: () => port.canWriteWorkflows(),
    reviewComments: (id) => port.reviewComments(id),
    minimizeComment: (comment) => port.minimizeComment(comment),
  };
}
