import type { Probot } from "probot";
import type { BlueprintEnv } from "../config/env.js";
import { cloneUrlOnHost, githubWebUrl } from "../github/github-host.js";
import { webhookIntake, type WebhookIntakeOptions } from "../github/webhook-intake.js";
import type { JobBackend } from "../jobs/backend.js";
import { deliveryJob, deliveryRemoval, type Accepted } from "../jobs/from-webhook.js";
import type { JobMetrics } from "../jobs/metrics.js";

/** An event made a job (or not, `null`), on its way to the backend. */
export type AcceptWebhook = (event: string, accepted: Accepted | null) => Promise<void>;

/** A verified delivery, as Probot or the lean route hands it over. */
export type WebhookDelivery = { id: string; name: string; payload: unknown };

/**
 * Every verified delivery: an uninstall or repositories removed is no job (there is no token to
 * mint) and goes straight to the backend; anything else is made a job (or not) and accepted.
 */
export function webhookReceiver(
  backend: JobBackend,
  metrics: JobMetrics,
  accept: AcceptWebhook,
): (delivery: WebhookDelivery) => Promise<void> {
  return async (delivery) => {
    const removal = deliveryRemoval(delivery);
    if (!removal) return accept(delivery.name, deliveryJob(delivery));
    metrics.webhooks.inc({ event: delivery.name, outcome: "accepted" });
    await backend.removeRepositories(removal);
  };
}

/**
 * An event made a job (or not) goes to the backend, counted. Workers in other processes
 * (`workersDeriveUrls`) clone and push where the configured GitHub says, never where a job says: a
 * webhook whose repository lives elsewhere is refused here, where the reason can be logged.
 */
export function webhookAcceptor(
  app: Probot,
  env: BlueprintEnv,
  backend: JobBackend,
  metrics: JobMetrics,
  workersDeriveUrls: boolean,
): AcceptWebhook {
  const webUrl = githubWebUrl(env);
  return async (event, accepted) => {
    if (!accepted) {
      metrics.webhooks.inc({ event, outcome: "ignored" });
      return;
    }
    if (workersDeriveUrls && !cloneUrlOnHost(webUrl, accepted.job.repository)) {
      app.log.error(
        { deliveryId: accepted.job.deliveryId, cloneUrl: accepted.job.repository.cloneUrl, githubUrl: webUrl },
        "refused a webhook whose repository.clone_url is not on the configured GitHub: set GHE_HOST and GHE_PROTOCOL to the GitHub that sends the webhooks",
      );
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
 * makes for every event: 317–333 µs of the intake's CPU per webhook in a fresh burst against 530–608 µs
 * through Probot's middleware (`npm run bench ablate`, 2026-11-28).
 * Replaced on the instance because Probot 14 offers no public way to: `Server.start()` always puts
 * `probot.getNodeMiddleware()` first among its handlers (before any `addHandler` one), and neither
 * `ServerOptions` nor `run()` takes another webhook handler.
 */
export function answerWebhooksDirectly(
  app: Probot,
  receive: (delivery: WebhookDelivery) => Promise<void>,
  tuning: Pick<WebhookIntakeOptions, "newConnectionsFirst"> = {},
): void {
  const probotMiddleware = app.getNodeMiddleware.bind(app);
  app.getNodeMiddleware = async (middlewareOptions = {}) =>
    webhookIntake({
      path: middlewareOptions.path ?? app.webhookPath,
      verify: (body, signature) => app.webhooks.verify(body, signature),
      receive,
      fallback: await probotMiddleware(middlewareOptions),
      log: app.log,
      ...tuning,
    });
}
