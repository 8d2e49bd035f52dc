import type { Reaction, ThreadPort } from "../../workflow/ports.js";
import type { ThreadScope } from "./scope.js";

/** Writing to the thread: comments posted, edited, reacted to and minimized. */
export function commentWrites({
  octokit,
  where,
  number,
}: ThreadScope): Pick<ThreadPort, "postComment" | "updateComment" | "reactToComment" | "minimizeComment"> {
  return {
    async postComment(body) {
      const { data } = await octokit.rest.issues.createComment({ ...where, issue_number: number, body });
      return { id: data.id, url: data.html_url };
    },
    async updateComment(id, body) {
      await octokit.rest.issues.updateComment({ ...where, comment_id: id, body });
    },
    async reactToComment(commentId: number, reaction: Reaction) {
      const { status } = await octokit.rest.reactions.createForIssueComment({
        ...where,
        comment_id: commentId,
        content: reaction,
      });
      // 200: this App's reaction was there already; 201: added now.
      return status !== 200;
    },
    async minimizeComment(comment) {
      if (!comment.nodeId) return;
      await octokit.graphql(
        "mutation($id: ID!) { minimizeComment(input: { subjectId: $id, classifier: OUTDATED }) { minimizedComment { isMinimized } } }",
        { id: comment.nodeId },
      );
    },
  };
}
