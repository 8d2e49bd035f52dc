import type { ThreadPort } from "../../workflow/ports.js";
import type { ThreadScope } from "./scope.js";

/**
 * The repository's own clean-up setting for merged branches (Blueprint deletes one through git, see
 * Mirror.deleteBranch).
 */
export function branches({ octokit, where }: ThreadScope): Pick<ThreadPort, "deletesMergedBranches"> {
  return {
    async deletesMergedBranches() {
      try {
        const { data } = await octokit.rest.repos.get(where);
        // GitHub leaves `delete_branch_on_merge` out unless the token may read the repository's
        // administration, which a job's narrowed token may not: then nobody here can tell.
        return typeof data.delete_branch_on_merge === "boolean" ? data.delete_branch_on_merge : null;
      } catch (error) {
        if ([403, 404].includes((error as { status?: number }).status ?? 0)) return null;
        throw error;
      }
    },
  };
}
