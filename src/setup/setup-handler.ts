import type { IncomingMessage, ServerResponse } from "node:http";
import { parsePublicUrl, unreachableWebhookWarning, webhookUrlOf, type WebhookTarget } from "./webhook-target.js";

export interface SetupState {
  target: WebhookTarget;
  webhookPath: string | undefined;
  /** Why the App, once registered, would refuse to start here (no working bubblewrap), or null. */
  sandboxProblem: string | null;
}

/**
 * Blueprint's routes in setup mode, ahead of Probot's setup app: a health check, a first page that says
 * where webhooks will go (and takes the public address), then Probot's own registration at /probot.
 * `useTarget` tells Probot's manifest about a public address entered on the page.
 */
export function setupHandler(state: SetupState, useTarget: (target: WebhookTarget) => void) {
  return async (req: IncomingMessage, res: ServerResponse): Promise<boolean> => {
    const url = new URL(req.url ?? "/", "http://setup.invalid");
    if (req.method !== "GET") return false;
    if (url.pathname === "/healthz") {
      // Up and answering, but not serving webhooks yet: a container's health check passes, the body says why.
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          status: "setup",
          webhooks: false,
          message: "no GitHub App credentials yet: open the setup page to register the App",
        }),
      );
      return true;
    }
    if (url.pathname === "/blueprint/public-url") {
      const base = parsePublicUrl(url.searchParams.get("url") ?? "");
      if (!base) {
        sendPage(
          res,
          400,
          state,
          "That is not an http(s) address. Enter the address GitHub can reach this server at, e.g. https://blueprint.example.com.",
        );
        return true;
      }
      state.target = { kind: "public", url: webhookUrlOf(base, state.webhookPath) };
      useTarget(state.target);
      res.writeHead(303, { location: "/" }).end();
      return true;
    }
    if (url.pathname === "/") {
      sendPage(res, 200, state);
      return true;
    }
    return false;
  };
}

function sendPage(res: ServerResponse, status: number, state: SetupState, error?: string): void {
  res.writeHead(status, { "content-type": "text/html; charset=utf-8" });
  res.end(setupPage(state.target, state.sandboxProblem, error));
}

export function setupPage(target: WebhookTarget, sandboxProblem: string | null, error?: string): string {
  const where =
    target.kind === "local"
      ? `<p class="warn"><strong>⚠️ GitHub cannot reach this server yet.</strong> ${escapeHtml(unreachableWebhookWarning(target.url))}</p>`
      : `<p class="ok">✅ GitHub will send webhooks to <code>${escapeHtml(target.url)}</code>${target.kind === "proxy" ? " (a relay this server reads from)" : ""}.</p>`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Blueprint set-up</title>
<style>body{font:16px system-ui,sans-serif;max-width:46rem;margin:3rem auto;padding:0 1rem}.warn{background:#fff5e6;border:1px solid #f0a020;padding:1rem}.ok{background:#eefbea;border:1px solid #3a3;padding:1rem}.error{color:#b00}input{width:28rem}</style>
</head><body>
<h1>Blueprint set-up</h1>
<h2>1. Where GitHub sends webhooks</h2>
${where}
${error ? `<p class="error">${escapeHtml(error)}</p>` : ""}
<form method="get" action="/blueprint/public-url">
<label>This server's public address: <input name="url" type="url" placeholder="https://blueprint.example.com" required></label>
<button type="submit">Use it</button>
</form>
<p>Or restart with <code>WEBHOOK_PROXY_URL</code> set to a channel from <a href="https://smee.io/new">smee.io</a> (and <code>npm install --no-save smee-client</code>), which relays webhooks to a server GitHub cannot reach.</p>
<h2>2. Register the GitHub App</h2>
<p><a href="/probot">Register Blueprint on GitHub →</a> GitHub then asks where to install it; the App's ID and keys are written to <code>.env</code>. Restart the server afterwards.</p>
${sandboxProblem ? `<h2>3. Before it can run jobs</h2>\n<p class="warn"><strong>⚠️ The App will not start with its credentials on this machine yet.</strong> ${escapeHtml(sandboxProblem)}</p>\n` : ""}</body></html>
`;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}
