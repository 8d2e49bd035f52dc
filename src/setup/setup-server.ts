import type { IncomingMessage, ServerResponse } from "node:http";
import type { Server as HttpServer } from "node:http";
import { Probot, Server, type Logger } from "probot";
import { setupHandler, type SetupState } from "./setup-handler.js";
import { unreachableWebhookWarning, webhookTarget, type WebhookTarget } from "./webhook-target.js";

/** Probot's setup app (the manifest flow at /probot): not exported by Probot, so loaded from its file. */
type ProbotSetupHandler = (req: IncomingMessage, res: ServerResponse) => Promise<boolean>;
interface ProbotSetupOptions {
  host: string;
  port: number;
  log: Logger;
  updateEnv?: ((env: Record<string, string>) => Record<string, string>) | undefined;
  SmeeClient?: unknown;
}
type SetupAppFactory = (options: ProbotSetupOptions) => () => Promise<ProbotSetupHandler>;

export interface SetupServerOptions {
  env: NodeJS.ProcessEnv;
  host: string;
  port: number;
  log: Logger;
  /** Tests: where credentials go instead of .env, and a relay client that makes no network call. */
  updateEnv?: ProbotSetupOptions["updateEnv"];
  SmeeClient?: unknown;
  /** Why agent commands could not run here yet (bubblewrap missing or broken), or null. */
  sandboxProblem?: string | null;
}

export interface SetupServer {
  http: HttpServer;
  target(): WebhookTarget;
  stop(): Promise<void>;
}

/**
 * Setup mode (no App credentials yet): Probot's registration flow, with Blueprint's first page and
 * /healthz in front of it, and a clear warning when GitHub could not reach the webhook URL.
 */
export async function startSetupServer(options: SetupServerOptions): Promise<SetupServer> {
  const { env, log } = options;
  // 1. Where webhooks would go; Probot's manifest reads WEBHOOK_PROXY_URL, so a public address is handed over
  // that way, in this process only (Probot writes only the App's credentials to .env).
  const localUrl = `http://${options.host === "0.0.0.0" || options.host === "127.0.0.1" ? "localhost" : options.host}:${options.port}/`;
  const useTarget = (target: WebhookTarget) => {
    if (target.kind === "public") env.WEBHOOK_PROXY_URL = target.url;
  };
  const state: SetupState = {
    target: webhookTarget(env, localUrl),
    webhookPath: env.WEBHOOK_PATH,
    sandboxProblem: options.sandboxProblem ?? null,
  };
  useTarget(state.target);

  // 2. The server: Blueprint's routes first, then Probot's setup app.
  const server = new Server({
    host: options.host,
    port: options.port,
    log,
    Probot: Probot.defaults({ appId: 1, privateKey: "dummy value for setup mode", log }),
  });
  server.addHandler(setupHandler(state, useTarget));
  const setupAppFactory = await loadProbotSetup();
  await server.loadHandlerFactory(
    setupAppFactory({
      host: options.host,
      port: options.port,
      log: log.child({ name: "setup" }),
      updateEnv: options.updateEnv,
      SmeeClient: options.SmeeClient,
    }),
  );
  const http = await server.start();

  // 3. Say it where people look first.
  if (state.target.kind === "local") log.warn(unreachableWebhookWarning(state.target.url));
  else log.info(`The GitHub App registered from the setup page will send webhooks to ${state.target.url}`);
  if (state.sandboxProblem)
    log.warn(
      `Registering the App works without it, but the App will not start with its credentials until this is fixed: ${state.sandboxProblem}`,
    );
  return { http, target: () => state.target, stop: () => server.stop() };
}

async function loadProbotSetup(): Promise<SetupAppFactory> {
  const file = new URL("./apps/setup.js", import.meta.resolve("probot"));
  const loaded: unknown = await import(file.href);
  const factory =
    typeof loaded === "object" && loaded !== null && "setupAppFactory" in loaded ? loaded.setupAppFactory : undefined;
  if (typeof factory !== "function")
    throw new Error(
      `Probot's setup app was not found at ${file.href}; this Probot version is not supported by Blueprint's setup mode`,
    );
  return factory as SetupAppFactory;
}
