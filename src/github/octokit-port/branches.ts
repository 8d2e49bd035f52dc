import type { ThreadPort } from "../../workflow/ports.js";
import type { ThreadScope } from "./scope.js";

/** The repository's branches after a merge: its own clean-up setting, and deleting one. */
export function branches({ octokit, where }: ThreadScope): Pick<ThreadPort, "deletesMergedBranches" | "deleteBranch"> {
  return {
    async deletesMergedBranches() {
      const { data } = await octokit.rest.repos.get(where);
      return data.delete_branch_on_merge === true;
    },
    async deleteBranch(branch) {
      try {
        await octokit.rest.git.deleteRef({ ...where, ref: `heads/${branch}` });
        return true;
      } catch (error) {
        // GitHub answers 422 "Reference does not exist" for a branch that is gone (deleted on merge, say).
        if ((error as { status?: number }).status === 422) return false;
        throw error;
      }
    },
  };
}
