// One webhook intake in a process of its own, started afresh for every burst (as `npm start` after a
// restart): Probot's Server with Probot's own webhook middleware, or with Blueprint's route swapped in
// (with or without new connections first). Each delivery becomes a job (deliveryJob), is claimed by id
// and serialized as the hand-over to a worker is: the same work behind every variant.
// A job's token is asked for as its webhook is taken in (not awaited by the answer), as intake mints
// one per job: by app-jwt.ts or by @octokit/auth-app, on this thread (a thread of its own for app-jwt.ts
// was measured here too and dropped: it did not pay); the time from the burst's start to each
// installation's first token. argv: <route: probot | lean | lean-no-ncf> [<tokens: none | ours | auth-app>].
// Messages: → {port}; "go" starts the clocks; "report" → {cpuUs, jobs, tokenMs: [per installation]}.
import { createAppAuth } from "@octokit/auth-app";
import { Octokit } from "@octokit/rest";
import { Probot, Server } from "probot";
import { pino } from "pino";
import { answerWebhooksDirectly } from "../../lib/app/webhook-route.js";
import { JobTokens } from "../../lib/credentials/job-token.js";
import { appTokenMinter } from "../../lib/github/app-jwt.js";
import { deliveryJob, HANDLED_EVENTS } from "../../lib/jobs/from-webhook.js";

const [variant, tokensVariant = "none"] = process.argv.slice(2);
const { privateKey, secret, githubUrl } = JSON.parse(process.env.BENCH_ABLATE_APP ?? "{}");
const log = pino({ level: "warn" });
const APP_ID = 4242;
const tokens = tokenSource(tokensVariant);
const claimed = new Set();
const tokenMs = new Map();
let started = 0;
let handedOver = 0;
const receive = async (delivery) => {
  const accepted = deliveryJob(delivery);
  if (!accepted || claimed.has(delivery.id)) return;
  claimed.add(delivery.id);
  handedOver += JSON.stringify(accepted.job).length > 0 ? 1 : 0;
  const job = accepted.job;
  if (tokens && !tokenMs.has(job.installationId)) {
    tokenMs.set(job.installationId, null);
    tokens.forJob(job).then(
      () => tokenMs.set(job.installationId, performance.now() - started),
      (error) => console.error("a token was not minted:", error.message),
    );
  }
};

function tokenSource(kind) {
  const quiet = { info() {}, warn() {}, error() {} };
  const options = { appId: APP_ID, privateKey, baseUrl: githubUrl, log: quiet };
  if (kind === "ours") return new JobTokens(appTokenMinter(options));
  if (kind === "auth-app") {
    const octokit = new Octokit({
      authStrategy: createAppAuth,
      auth: { appId: APP_ID, privateKey },
      baseUrl: githubUrl,
    });
    return new JobTokens(async () => octokit);
  }
  return null;
}

const server = new Server({
  Probot: Probot.defaults({ appId: APP_ID, privateKey, secret, log }),
  host: "127.0.0.1",
  port: 0,
  log,
});
await server.load((app) => {
  app.on(HANDLED_EVENTS, (context) => receive({ id: context.id, name: context.name, payload: context.payload }));
  if (variant !== "probot") answerWebhooksDirectly(app, receive, { newConnectionsFirst: variant !== "lean-no-ncf" });
});
const http = await server.start();
let cpu = null;
process.on("message", (message) => {
  if (message === "go") {
    cpu = process.cpuUsage();
    started = performance.now();
  }
  if (message === "report") {
    const used = process.cpuUsage(cpu ?? undefined);
    const report = () =>
      process.send({ cpuUs: used.user + used.system, jobs: handedOver, tokenMs: [...tokenMs.values()] }, () =>
        process.exit(0),
      );
    // The last tokens may still be on their way.
    const waitForTokens = (tries) =>
      [...tokenMs.values()].includes(null) && tries > 0 ? setTimeout(() => waitForTokens(tries - 1), 50) : report();
    waitForTokens(200);
  }
});
// Ready as after /healthz: the token source has minted once (its code loaded, its connection open).
await tokens?.forJob({ installationId: 1, kind: "plan", repository: { name: "warm-up" } });
process.send({ port: http.address().port });
