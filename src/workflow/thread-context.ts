import { parseRepoConfig, REPO_CONFIG_PATH, type RepoConfigRead } from "../config/repo-config.js";
import { atLeast, type PermissionLevel } from "../github/permission.js";
import type { ThreadContext } from "../agent/prompts.js";
import type { Workspace } from "../workspace/workspace.js";
import type { ThreadComment, ThreadInfo, ThreadPort } from "./ports.js";
import { hasStateMarker } from "../github/state-marker.js";
import { sanitiseUntrusted } from "../agent/untrusted.js";

const MAX_CONTEXT_COMMENTS = 30;

/** Who may command, asked once per login per job. */
export function trustChecker(port: ThreadPort, minimum: PermissionLevel): (login: string) => Promise<boolean> {
  const cache = new Map<string, Promise<PermissionLevel>>();
  return async (login) => {
    let level = cache.get(login);
    if (!level) {
      level = port.permission(login).catch((): PermissionLevel => "none");
      cache.set(login, level);
    }
    return atLeast(await level, minimum);
  };
}

/** The issue or pull request as the model sees it: body, conversation and, for a PR, its diff. */
export async function loadThreadContext(
  info: ThreadInfo,
  comments: ThreadComment[],
  isTrusted: (login: string) => Promise<boolean>,
  workspace: Workspace,
  excludeCommentIds: Set<number>,
): Promise<ThreadContext> {
  const conversation = comments
    .filter((comment) => !comment.own && !excludeCommentIds.has(comment.id) && !hasStateMarker(comment.body))
    .slice(-MAX_CONTEXT_COMMENTS);
  const authored = await Promise.all(
    conversation.map(async (comment) => ({
      author: comment.author,
      trusted: !comment.authorIsBot && (await isTrusted(comment.author)),
      text: comment.body,
      label: `Comment ${comment.createdAt.slice(0, 10)}`,
    })),
  );
  const authorTrusted = await isTrusted(info.author);
  return {
    kind: info.kind,
    number: info.number,
    // The title is the author's text too: an outsider's loses its hidden characters and comments.
    title: authorTrusted ? info.title : sanitiseUntrusted(info.title).replace(/\s+/g, " ").trim(),
    body: { author: info.author, trusted: authorTrusted, text: info.body, label: "Description" },
    comments: authored,
    pullRequest: info.pullRequest
      ? {
          baseRef: info.pullRequest.baseRef,
          headRef: info.pullRequest.headRef,
          diffSummary: await workspace.diffSummary(`refs/heads/${info.pullRequest.baseRef}`),
        }
      : undefined,
  };
}

/** Configuration comes from the default branch only: a PR's own copy is code under review. */
export async function loadRepoConfig(
  readAtRef: (ref: string, file: string) => Promise<string | null>,
  defaultBranch: string,
): Promise<RepoConfigRead> {
  return parseRepoConfig(await readAtRef(`refs/heads/${defaultBranch}`, REPO_CONFIG_PATH));
}
