import type { ThreadPort } from "../../workflow/ports.js";
import type { ThreadScope } from "./scope.js";

interface InstallationAuth {
  token?: string;
  permissions?: Record<string, string>;
}

/** What the installation's credentials allow: git over HTTPS, and changes to workflows. */
export function installation({ octokit }: ThreadScope): Pick<ThreadPort, "gitToken" | "canWriteWorkflows"> {
  // Asked at each use, not kept: a job's token may be renewed while it works (a build that outlasts its hour).
  const installationAuth = () => octokit.auth({ type: "installation" }) as Promise<InstallationAuth>;
  return {
    async gitToken() {
      return (await installationAuth()).token ?? null;
    },
    async canWriteWorkflows() {
      const granted = await installationAuth().catch((): InstallationAuth => ({}));
      return granted.permissions?.workflows === "write";
    },
  };
}
