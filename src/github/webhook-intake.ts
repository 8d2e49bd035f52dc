// Ablation 2026-11-28 (npm run bench ablate, load 5–16): 317–333 µs CPU a webhook vs Probot's middleware 530–608 µs.
import type { IncomingMessage, ServerResponse } from "node:http";
import { NewConnectionsFirst } from "../shared/new-connections-first.js";
import type { Logger } from "../workflow/deps.js";

/** A delivery whose signature checked out: what GitHub sent, parsed. */
export interface VerifiedDelivery {
  id: string;
  name: string;
  payload: unknown;
}

/** As Probot and @octokit/webhooks type a node middleware (`next` is whatever the server passes). */
// Probot's own middleware type names `next` as `Function`; ours must fit it.
// eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
export type NodeMiddleware = (req: IncomingMessage, res: ServerResponse, next?: Function) => Promise<boolean>;

export interface WebhookIntakeOptions {
  /** Where GitHub posts (Probot's `webhookPath`). */
  path: string;
  /** Probot's own signature check (its webhooks' secret). */
  verify(body: string, signature: string): Promise<boolean>;
  /** Claims and enqueues the delivery (or ignores it); the answer goes out when this resolves. */
  receive(delivery: VerifiedDelivery): Promise<void>;
  /** Every other request (Probot's own middleware). */
  fallback: NodeMiddleware;
  log: Pick<Logger, "error" | "warn">;
  /** Accept a burst's new connections before webhook work (default true); false only for the bench's ablation. */
  newConnectionsFirst?: boolean;
}

/** GitHub sends at most 25 MB; anything larger is not a delivery. */
const MAX_BODY_BYTES = 25 * 1024 * 1024;
const HEADERS = ["x-github-event", "x-hub-signature-256", "x-github-delivery"] as const;
const JSON_TYPE = /^\s*application\/json\s*(?:;|$)/i;

/**
 * The webhook route, answered the way @octokit/webhooks answers it (same checks, statuses and
 * bodies) but without Probot's per-event Octokit and context: intake turns a delivery into a job
 * from the payload alone, and its CPU per webhook is what bounds how fast a burst is answered.
 */
export function webhookIntake(options: WebhookIntakeOptions): NodeMiddleware {
  // A burst on fresh connections is accepted before the webhook work on the open ones (why: the module's top).
  const turns = options.newConnectionsFirst === false ? null : new NewConnectionsFirst();
  return async (req, res, next) => {
    const path = (req.url ?? "").split("?")[0]?.replace(/\/+$/, "") || "/";
    if (path !== options.path.replace(/\/+$/, "")) return options.fallback(req, res, next);
    if (req.method !== "POST") return answer(res, 404, { error: `Unknown route: ${req.method} ${path}` });
    if (!JSON_TYPE.test(req.headers["content-type"] ?? ""))
      return answer(res, 415, { error: 'Unsupported "Content-Type" header value. Must be "application/json"' });
    const missing = HEADERS.filter((name) => typeof req.headers[name] !== "string");
    if (missing.length > 0) return answer(res, 400, { error: `Required headers missing: ${missing.join(", ")}` });
    const [name, signature, id] = HEADERS.map((header) => req.headers[header] as string) as [string, string, string];

    const body = await readBody(req).catch(() => null);
    if (body === null) return answer(res, 413, { error: "The payload could not be read (or is over 25 MB)" });
    await turns?.turn(req.socket);
    if (!(await options.verify(body, signature).catch(() => false))) {
      return answer(res, 400, {
        error: "Error: [@octokit/webhooks] signature does not match event payload and secret",
      });
    }
    let payload: unknown;
    try {
      payload = JSON.parse(body);
    } catch {
      return answer(res, 400, { error: "SyntaxError: Invalid JSON" });
    }
    try {
      await options.receive({ id, name, payload });
    } catch (error) {
      options.log.error({ err: error, deliveryId: id, event: name }, "a webhook could not be taken in");
      return answer(res, 500, { error: "Internal error: the webhook could not be taken in" });
    }
    res.writeHead(200, { "content-type": "text/plain" }).end("ok\n");
    return true;
  };
}

function answer(res: ServerResponse, status: number, body: { error: string }): true {
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
  return true;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      // Read to the end (the answer needs the connection), keeping nothing past the limit.
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    req.on("end", () =>
      size > MAX_BODY_BYTES ? reject(new Error("payload too large")) : resolve(Buffer.concat(chunks).toString("utf8")),
    );
    req.on("error", reject);
  });
}
