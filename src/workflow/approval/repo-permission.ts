import type { RepoConfig } from "../../config/repo-config.js";
import { atLeast } from "../../github/permission.js";
import type { ThreadPort } from "../ports.js";

/**
 * A repository's `.github/blueprint.yml` may raise the App's minimum permission (`min_permission`);
 * it cannot lower it, because the App's minimum is checked before the repository is read.
 * Returns the refusal to post, or null when the actor may go on.
 */
export async function repoMinimumRefusal(port: ThreadPort, actor: string, config: RepoConfig): Promise<string | null> {
  if (!config.min_permission) return null;
  if (atLeast(await port.permission(actor), config.min_permission)) return null;
  return `Sorry @${actor}, this repository's \`.github/blueprint.yml\` allows only people with ${config.min_permission} access (or higher) to command Blueprint.`;
}
