// The GitHub side: the double with one installation and repository per tenant, and GitHub's habit
// of delivering a webhook for every comment, the App's own included.
import { startGitHubDouble, type GitHubDouble } from "../../test/e2e/double/github-server.js";
import { deliverWebhook, issueCommentCreated } from "../../test/e2e/double/webhooks.js";
import { FILES, PEOPLE, issuesFor, ownerOf, type Tenant } from "./conditions.js";
import { WEBHOOK_SECRET } from "./config.js";
import { sleep } from "./format.js";

/** One installation and repository per id, one or two issues each, the same people everywhere. */
export function startGitHub(ids: number[]): Promise<GitHubDouble> {
  const [first = 0, ...others] = ids;
  return startGitHubDouble({
    files: FILES,
    installationId: first,
    owner: ownerOf(first),
    issues: issuesFor(first),
    permissions: PEOPLE,
    installations: others.map((id) => ({ id, owner: ownerOf(id), issues: issuesFor(id), permissions: PEOPLE })),
    // Nothing but the app's pushes changes the repositories here; GitHub's git does not run on the machine under test.
    cacheGitReads: true,
  });
}

export interface Echo {
  /** Stops echoing once the deliveries in flight are answered: how many went out, and how many got a 2xx. */
  stop(): Promise<{ sent: number; ok: number }>;
}

/**
 * GitHub sends a webhook for every comment, the App's own included: each comment the app posts is
 * delivered back (signed, as the bot) while the run lasts. The app must answer and ignore them.
 */
export function echoBotComments(url: string, tenants: Tenant[], typed: Set<number>): Echo {
  const echoed = new Set<number>();
  const statuses: number[] = [];
  const inFlight = new Set<Promise<void>>();
  let running = true;
  const loop = (async () => {
    while (running) {
      for (const tenant of tenants) {
        for (const comment of tenant.view.state.comments) {
          if (typed.has(comment.id) || echoed.has(comment.id) || comment.user.type !== "Bot") continue;
          echoed.add(comment.id);
          const sent = deliverWebhook(url, WEBHOOK_SECRET, issueCommentCreated(tenant.view, comment)).then(
            (response) => void statuses.push(response.status),
            () => void statuses.push(0),
          );
          inFlight.add(sent);
          void sent.finally(() => inFlight.delete(sent));
        }
      }
      await sleep(200);
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      await Promise.allSettled([...inFlight]);
      return { sent: statuses.length, ok: statuses.filter((status) => status >= 200 && status < 300).length };
    },
  };
}
