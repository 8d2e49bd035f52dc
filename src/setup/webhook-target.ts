/** Where the GitHub App registered in setup mode will send its webhooks. */
export type WebhookTarget =
  /** A relay (a smee.io channel) that this server pulls webhooks from: works behind NAT. */
  | { kind: "proxy"; url: string }
  /** This server's public address: GitHub posts to it directly. */
  | { kind: "public"; url: string }
  /** Nothing set: Probot falls back to this server's local address, which GitHub cannot reach. */
  | { kind: "local"; url: string };

export const DEFAULT_WEBHOOK_PATH = "/api/github/webhooks";

/** Probot's manifest uses WEBHOOK_PROXY_URL when set; BLUEPRINT_PUBLIC_URL is Blueprint's; else the local fallback. */
export function webhookTarget(env: NodeJS.ProcessEnv, local: string): WebhookTarget {
  if (env.WEBHOOK_PROXY_URL) return { kind: "proxy", url: env.WEBHOOK_PROXY_URL };
  const publicUrl = env.BLUEPRINT_PUBLIC_URL ? parsePublicUrl(env.BLUEPRINT_PUBLIC_URL) : null;
  if (publicUrl) return { kind: "public", url: webhookUrlOf(publicUrl, env.WEBHOOK_PATH) };
  return { kind: "local", url: local };
}

/** An http(s) address without query or fragment, or null. */
export function parsePublicUrl(text: string): URL | null {
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    return null;
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return null;
  url.search = "";
  url.hash = "";
  return url;
}

/** The webhook endpoint under a public base address (Probot serves webhooks at WEBHOOK_PATH). */
export function webhookUrlOf(base: URL, webhookPath = DEFAULT_WEBHOOK_PATH): string {
  return `${base.href.replace(/\/+$/, "")}${webhookPath.startsWith("/") ? webhookPath : `/${webhookPath}`}`;
}

/** The warning for the start-up log and the setup page when GitHub could not reach the webhook URL. */
export function unreachableWebhookWarning(localUrl: string): string {
  return (
    `No WEBHOOK_PROXY_URL or BLUEPRINT_PUBLIC_URL is set: a GitHub App registered now would send its webhooks to ${localUrl}, ` +
    "which GitHub cannot reach, so comments like /plan would never arrive. Set WEBHOOK_PROXY_URL to a channel from https://smee.io/new " +
    "(and run `npm install --no-save smee-client`), or BLUEPRINT_PUBLIC_URL to this server's public address, or enter that address on the setup page; then register the App."
  );
}
