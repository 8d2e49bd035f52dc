import { issueOfBuildBranch } from "../../shared/build-branch.js";
import type { ThreadPort } from "../ports.js";

/**
 * Where a follow-up on a pull request runs: on the issue a Blueprint pull request was built for (its plan, its lane,
 * its build), or on the pull request itself (null) when its plan was made there or it is nobody's build. Whether the
 * issue's plan really opened this pull request, its signed state says when the follow-up starts.
 */
export async function followUpHome(port: ThreadPort, pullRequest: number): Promise<number | null> {
  const facts = await port.reviews?.pullRequest(pullRequest);
  if (!facts || !facts.sameRepo || !facts.authorIsBot) return null;
  const issue = issueOfBuildBranch(facts.headRef);
  return issue === pullRequest ? null : issue;
}
