/** The fields GitHub gives a comment that say who wrote it. */
export interface CommentAuthorship {
  user: { login: string; type: string } | null;
  performed_via_github_app?: { id: number } | null;
}

/** Ours: a bot comment made through this App (its id), or by this App's bot login. Never just "a bot". */
export function ownCommentMatcher(app: {
  appId: number | undefined;
  botLogin: string;
}): (comment: CommentAuthorship) => boolean {
  return (comment) =>
    comment.user?.type === "Bot" &&
    ((app.appId !== undefined && comment.performed_via_github_app?.id === app.appId) ||
      comment.user.login === app.botLogin);
}
