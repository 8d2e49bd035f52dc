import type { ThreadPort } from "../../workflow/ports.js";
import type { ThreadScope } from "./scope.js";

/** The repository's branches after a merge: its own clean-up setting, and deleting one. */
export function branches({ octokit, where }: ThreadScope): Pick<ThreadPort, "deletesMergedBranches" | "deleteBranch"> {
  return {
    async deletesMergedBranches() {
      try {
        const { data } = await octokit.rest.repos.get(where);
        return data.delete_branch_on_merge === true;
      } catch (error) {
        // Cannot tell (the token may not read the repository's settings): Blueprint then deletes the branch itself, which is harmless twice.
        if ([403, 404].includes((error as { status?: number }).status ?? 0)) return false;
        throw error;
      }
    },
    async deleteBranch(branch) {
      try {
        await octokit.rest.git.deleteRef({ ...where, ref: `heads/${branch}` });
        return true;
      } catch (error) {
        // GitHub answers 422 "Reference does not exist" for a branch that is gone (deleted on merge, say); other refusals (a protected branch) are errors.
        const { status, message } = error as { status?: number; message?: string };
        if (status === 422 && /does not exist/i.test(message ?? "")) return false;
        throw error;
      }
    },
  };
}
