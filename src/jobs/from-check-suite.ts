import { issueOfBuildBranch } from "../shared/build-branch.js";
import { repositoryOf, type Accepted, type PayloadRepository, type PayloadUser } from "./payload.js";

/**
 * `check_suite.completed` with `failure` on the head of a pull request of this repository: a job on the thread whose
 * plan may have built it. Whether it did (and whether the suite is Blueprint's own), the worker reads.
 */
export function checkSuiteJob(
  deliveryId: string,
  payload: {
    installation?: { id: number } | undefined;
    repository: PayloadRepository;
    check_suite: {
      id: number;
      head_sha: string;
      head_branch: string | null;
      conclusion: string | null;
      app: { id: number; slug?: string | undefined } | null;
      pull_requests: Array<{ number: number; head: { sha: string } }>;
    };
    sender: PayloadUser;
  },
  receivedAt = Date.now(),
): Accepted | null {
  const suite = payload.check_suite;
  const installationId = payload.installation?.id;
  const pull = suite.pull_requests.find((candidate) => candidate.head.sha === suite.head_sha);
  if (!installationId || suite.conclusion !== "failure" || !pull || !suite.app) return null;
  return {
    job: {
      kind: "check-failure",
      deliveryId,
      installationId,
      repository: repositoryOf(payload.repository),
      number: issueOfBuildBranch(suite.head_branch ?? "") ?? pull.number,
      actor: payload.sender.login,
      receivedAt,
      pullRequest: pull.number,
      headSha: suite.head_sha,
      suiteId: suite.id,
      app: { id: suite.app.id, slug: suite.app.slug ?? "" },
    },
    keys: [`delivery:${deliveryId}`, `check-suite:${suite.id}`],
  };
}
