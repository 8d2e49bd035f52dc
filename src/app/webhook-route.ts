import type { Probot } from "probot";
import type { BlueprintEnv } from "../config/env.js";
import { cloneUrlOnHost, githubWebUrl } from "../github/github-host.js";
import { webhookIntake } from "../github/webhook-intake.js";
import type { JobBackend } from "../jobs/backend.js";
import { deliveryJob, type Accepted } from "../jobs/from-webhook.js";
import type { JobMetrics } from "../jobs/metrics.js";

/** An event made a job (or not, `null`), on its way to the backend. */
export type AcceptWebhook = (event: string, accepted: Accepted | null) => Promise<void>;

/**
 * An event made a job (or not) goes to the backend, counted. Workers in other processes
 * (`workersDeriveUrls`) clone and push where the configured GitHub says, never where a job says: a
 * webhook whose repository lives elsewhere is refused here, where the reason can be logged.
 */
export function webhookAcceptor(app: Probot, env: BlueprintEnv, backend: JobBackend, metrics: JobMetrics, workersDeriveUrls: boolean): AcceptWebhook {
  const webUrl = githubWebUrl(env);
  return async (event, accepted) => {
    if (!accepted) {
      metrics.webhooks.inc({ event, outcome: "ignored" });
      return;
    }
    if (workersDeriveUrls && !cloneUrlOnHost(webUrl, accepted.job.repository)) {
      app.log.error({ deliveryId: accepted.job.deliveryId, cloneUrl: accepted.job.repository.cloneUrl, githubUrl: webUrl }, "refused a webhook whose repository.clone_url is not on the configured GitHub: set GHE_HOST and GHE_PROTOCOL to the GitHub that sends the webhooks");
      metrics.webhooks.inc({ event, outcome: "refused" });
      return;
    }
    const fresh = await backend.submit(accepted);
    metrics.webhooks.inc({ event, outcome: fresh ? "accepted" : "duplicate" });
  };
}

/**
 * Deliveries over HTTP: Probot's server asks the app for its webhook route, and Blueprint answers it
 * itself (Probot's signature check, then straight to the job), without the Octokit and context Probot
 * makes for every event — about half of the intake's CPU per webhook in a burst.
 * Replaced on the instance because Probot 14 offers no public way to: `Server.start()` always puts
 * `probot.getNodeMiddleware()` first among its handlers (before any `addHandler` one), and neither
 * `ServerOptions` nor `run()` takes another webhook handler.
 */
export function answerWebhooksDirectly(app: Probot, accept: AcceptWebhook): void {
  const probotMiddleware = app.getNodeMiddleware.bind(app);
  app.getNodeMiddleware = async (middlewareOptions = {}) =>
    webhookIntake({
      path: middlewareOptions.path ?? app.webhookPath,
      verify: (body, signature) => app.webhooks.verify(body, signature),
      receive: (delivery) => accept(delivery.name, deliveryJob(delivery)),
      fallback: await probotMiddleware(middlewareOptions),
      log: app.log,
    });
}
