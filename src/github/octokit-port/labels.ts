import type { ThreadPort } from "../../workflow/ports.js";
import { unlessNotFound, type ThreadScope } from "./scope.js";

/** The thread's labels, and the repository's labels they come from. */
export function labels({
  octokit,
  where,
  number,
}: ThreadScope): Pick<
  ThreadPort,
  "threadLabels" | "repositoryLabels" | "createLabel" | "addThreadLabel" | "removeThreadLabel"
> {
  return {
    async threadLabels() {
      const all = await octokit.paginate(octokit.rest.issues.listLabelsOnIssue, {
        ...where,
        issue_number: number,
        per_page: 100,
      });
      return all.map((label) => label.name);
    },
    async repositoryLabels() {
      const all = await octokit.paginate(octokit.rest.issues.listLabelsForRepo, { ...where, per_page: 100 });
      return all.map((label) => label.name);
    },
    async createLabel(label) {
      try {
        await octokit.rest.issues.createLabel({ ...where, ...label });
        return true;
      } catch (error) {
        if (alreadyExists(error)) return false;
        throw error;
      }
    },
    async addThreadLabel(name) {
      await octokit.rest.issues.addLabels({ ...where, issue_number: number, labels: [name] });
    },
    async removeThreadLabel(name) {
      // 404: the thread no longer carries it (someone took it off meanwhile), which is what was wanted.
      await unlessNotFound(octokit.rest.issues.removeLabel({ ...where, issue_number: number, name }), null);
    },
  };
}

/** GitHub's 422 for a label whose name the repository uses already (`already_exists`). */
function alreadyExists(error: unknown): boolean {
  const { status, response } = error as {
    status?: number;
    response?: { data?: { errors?: Array<{ code?: string }> } };
  };
  return status === 422 && (response?.data?.errors ?? []).some((problem) => problem.code === "already_exists");
}
