import type { ThreadPort } from "../../workflow/ports.js";
import { toPermissionLevel } from "../permission.js";
import { unlessNotFound, type ThreadScope } from "./scope.js";

/** Who people are to the repository: their permission, their teams, their public account. */
export function people({ octokit, where }: ThreadScope): Pick<ThreadPort, "permission" | "teamMember" | "account"> {
  return {
    async permission(login) {
      const answer = await unlessNotFound(
        octokit.rest.repos.getCollaboratorPermissionLevel({ ...where, username: login }),
        null,
      );
      return answer
        ? toPermissionLevel({ permission: answer.data.permission, role_name: answer.data.role_name })
        : "none";
    },
    async teamMember(org, teamSlug, login) {
      const answer = await unlessNotFound(
        octokit.rest.teams.getMembershipForUserInOrg({ org, team_slug: teamSlug, username: login }),
        null,
      );
      // A pending invitation is not membership yet.
      return answer?.data.state === "active";
    },
    async account(login) {
      const answer = await unlessNotFound(octokit.rest.users.getByUsername({ username: login }), null);
      return answer ? { login: answer.data.login, id: answer.data.id, email: answer.data.email ?? null } : null;
    },
  };
}
