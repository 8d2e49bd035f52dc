// The webhooks' way to the app: wait until it says ready, warm it up (or not), then the burst.
import { once } from "node:events";
import { fork } from "node:child_process";
import { randomUUID } from "node:crypto";
import { issueCommentCreated, signWebhook, webhookHeaders } from "../../test/e2e/double/webhooks.js";
import type { Delivery, Tenant } from "./conditions.js";
import { CONCURRENCY, SENDER, WEBHOOK_SECRET } from "./config.js";
import { sleep } from "./format.js";

/** A webhook ready to write: its body and GitHub's headers, signature included. */
export interface Payload {
  body: string;
  headers: Record<string, string>;
}

/** Until /healthz says every process is up, as an operator waits after a restart. */
export async function untilReady(url: string, deadline: number): Promise<void> {
  while (Date.now() < deadline) {
    const health = (await fetch(`${url}/healthz`).then(
      (response) => response.json(),
      () => null,
    )) as { queue?: { ready?: boolean } } | null;
    if (health?.queue?.ready) return;
    await sleep(100);
  }
  throw new Error("the app did not report ready (/healthz queue.ready) before the deadline");
}

/**
 * Deliveries the sender warms up with: comments by a bot (a dependency updater's "Rebased"), which
 * the app verifies, parses and drops as it would any bot's, starting no job. An App on GitHub sees a
 * stream of comments like these, so a burst into a long-running App is not its first traffic: with
 * 3000 of them (about three seconds) V8 has compiled the webhook path's hot code and the sender's
 * connections are open, and the intake's thread spent about 250 ms of CPU on the burst's thousand
 * webhooks, against about 490 ms after 300 (2026-11-25). None (the default) is a process that has
 * just started, where issue #29 says the targets stand.
 */
export function warmUp(tenants: Tenant[], count: number): { deliveries: Payload[]; commentIds: number[] } {
  const commentIds: number[] = [];
  const deliveries = Array.from({ length: count }, (_, n): Payload => {
    const tenant = tenants[n % tenants.length] as Tenant;
    const comment = tenant.view.state.addComment(
      tenant.issues[0] ?? 1,
      { login: "renovate[bot]", type: "Bot" },
      "Rebased on the default branch.",
      false,
    );
    commentIds.push(comment.id);
    const body = JSON.stringify(issueCommentCreated(tenant.view, comment).payload);
    return { body, headers: webhookHeaders("issue_comment", randomUUID(), signWebhook(WEBHOOK_SECRET, body)) };
  });
  return { deliveries, commentIds };
}

/**
 * Sends the warm-up, calls `beforeBurst`, then sends `deliveries` and records their answers on them.
 *
 * The sender (bench/support/webhook-sender.mjs) runs in a process of its own, writing pre-encoded
 * requests on raw keep-alive sockets: GitHub's senders do not share the app's machine, so ours should
 * take as little of its CPU as it can (a Node `http` client in this process took a third of a core
 * during the burst), and the double serving GitHub's side on this process's loop must not count as
 * the app's response time.
 */
export async function sendAll(
  url: string,
  deliveries: Delivery[],
  warm: Payload[],
  deadline: number,
  beforeBurst: () => void,
): Promise<void> {
  const payloads = deliveries.map(({ command, deliveryId }): Payload => ({
    body: command.body,
    headers: webhookHeaders("issue_comment", deliveryId, command.signature),
  }));
  const sender = fork(SENDER, [], { execArgv: [], stdio: ["ignore", "inherit", "inherit", "ipc"] });
  try {
    // Over the IPC channel rather than a file: a file's pages written back to disk during the burst cost a kernel
    // thread half a core.
    sender.send({ url, concurrency: CONCURRENCY, deadline, warmUp: warm, deliveries: payloads });
    await once(sender, "message");
    beforeBurst();
    sender.send("go");
    const [results] = (await once(sender, "message")) as [
      Array<{ sentAt: number; latencyMs: number; status: number } | null>,
    ];
    results.forEach((result, index) => {
      const delivery = deliveries[index];
      if (result && delivery) Object.assign(delivery, result);
    });
  } finally {
    sender.kill();
  }
}
