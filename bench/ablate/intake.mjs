// The webhook route: Blueprint's (webhook-intake.ts, swapped in for Probot's middleware, with
// new-connections-first.ts) against Probot's own, each in a process that has just started, taking a
// burst of 1000 signed issue_comment webhooks on 100 fresh connections (the load bench's sender).
// Figures: the intake process's CPU per webhook, and the burst's response p99.
import { fork } from "node:child_process";
import { createHmac, generateKeyPairSync, randomUUID } from "node:crypto";
import { once } from "node:events";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { interleaved, median, percentile, printRounds, verdict } from "./rounds.mjs";
import { startStub } from "./stub.mjs";

const WEBHOOKS = 1000;
const CONCURRENCY = 100;
const SECRET = "bench-ablate-webhook-secret";
const SENDER = new URL("../support/webhook-sender.mjs", import.meta.url);
const SERVER = new URL("./intake-server.mjs", import.meta.url);

export async function run() {
  const privateKey = generateKeyPairSync("rsa", {
    modulusLength: 2048,
    privateKeyEncoding: { type: "pkcs1", format: "pem" },
    publicKeyEncoding: { type: "spki", format: "pem" },
  }).privateKey;
  const deliveries = makeDeliveries();
  const stub = await startStub();
  try {
    const app = { privateKey, secret: SECRET, githubUrl: stub.url };
    return [...(await routes(app, deliveries)), ...(await tokens(app, deliveries))];
  } finally {
    await stub.stop();
  }
}

/** The route's pairs: CPU per webhook and p99 of each variant's bursts (no tokens minted). */
async function routes(app, deliveries) {
  const variants = ["lean", "probot", "lean-no-ncf"];
  const bursts = {};
  const results = await interleaved(variants, async (variant) => {
    const burst = await oneBurst(variant, "none", app, deliveries);
    (bursts[variant] ??= []).push(burst);
    return burst.cpuUs / WEBHOOKS;
  });
  printRounds("intake process CPU per webhook", "µs", results);
  const p99 = figuresOf(bursts, (burst) => burst.p99);
  printRounds("webhook response p99", "ms", p99);
  return [
    verdict("webhook-intake.ts + swap vs Probot's middleware (CPU per webhook)", "µs", results.lean, results.probot),
    verdict("  the same, webhook p99 of a fresh burst", "ms", p99.lean, p99.probot),
    verdict("new-connections-first.ts vs none (webhook p99 of a fresh burst)", "ms", p99.lean, p99["lean-no-ncf"], [
      "KEEP OURS",
      "DROP IT",
    ]),
  ];
}

/** The token pairs, during the same kind of burst: until the last of 100 installations has its first token. */
async function tokens(app, deliveries) {
  const variants = ["ours", "auth-app"];
  const bursts = {};
  const results = await interleaved(variants, async (variant) => {
    const burst = await oneBurst("lean", variant, app, deliveries);
    (bursts[variant] ??= []).push(burst);
    return Math.max(...burst.tokenMs);
  });
  printRounds("a fresh burst: until every installation has its first token", "ms", results);
  const firstP50 = figuresOf(bursts, (burst) => median(burst.tokenMs));
  printRounds("  the same, median installation", "ms", firstP50);
  return [
    verdict(
      "app-jwt.ts vs @octokit/auth-app (a fresh burst's last first token)",
      "ms",
      results.ours,
      results["auth-app"],
    ),
  ];
}

function figuresOf(bursts, pick) {
  return Object.fromEntries(
    Object.entries(bursts).map(([variant, list]) => {
      const figures = list.map(pick);
      return [variant, { figures, median: median(figures) }];
    }),
  );
}

async function oneBurst(variant, tokenVariant, app, deliveries) {
  const server = fork(SERVER, [variant, tokenVariant], {
    env: { ...process.env, BENCH_ABLATE_APP: JSON.stringify(app) },
    execArgv: ["--max-semi-space-size=64"], // as `npm start` runs the app
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const [{ port }] = await once(server, "message");
  const sender = fork(SENDER, [], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
  sender.send({
    url: `http://127.0.0.1:${port}/api/github/webhooks`,
    concurrency: CONCURRENCY,
    deadline: Date.now() + 120_000,
    warmUp: [],
    deliveries,
  });
  await once(sender, "message"); // "warm" (no warm-up: fresh connections, code not yet compiled)
  server.send("go");
  sender.send("go");
  const [answers] = await once(sender, "message");
  server.send("report");
  const [{ cpuUs, jobs, tokenMs }] = await once(server, "message");
  await Promise.all([once(server, "exit"), sender.exitCode === null ? once(sender, "exit") : null]);
  const latencies = answers.filter(Boolean).map((answer) => answer.latencyMs);
  const non2xx = answers.filter((answer) => !answer || answer.status < 200 || answer.status >= 300).length;
  if (non2xx > 0 || jobs !== WEBHOOKS) console.log(`  ${variant}/${tokenVariant}: ${non2xx} non-2xx, ${jobs} jobs`);
  return {
    cpuUs,
    jobs,
    tokenMs,
    p99: percentile(latencies, 99),
  };
}

/** 1000 `/plan` comments by writers over 100 installations, from @octokit/webhooks-examples' issue_comment.created. */
function makeDeliveries() {
  const require = createRequire(import.meta.url);
  const examplesDir = path.dirname(require.resolve("@octokit/webhooks-examples/package.json"));
  const examples = JSON.parse(readFileSync(path.join(examplesDir, "api.github.com", "index.json"), "utf8"));
  const example = examples
    .find((entry) => entry.name === "issue_comment")
    .examples.find((candidate) => candidate.action === "created");
  return Array.from({ length: WEBHOOKS }, (_, n) => {
    const payload = structuredClone(example);
    payload.installation = { id: 1000 + (n % 100), node_id: "MDIz" };
    payload.comment.id = 500_000 + n;
    payload.comment.body = `/plan ablation ${n}: greet people by name`;
    payload.comment.author_association = "OWNER";
    payload.sender.type = "User";
    payload.comment.user.type = "User";
    const body = JSON.stringify(payload);
    const signature = `sha256=${createHmac("sha256", SECRET).update(body).digest("hex")}`;
    return {
      body,
      headers: {
        "content-type": "application/json",
        "x-github-event": "issue_comment",
        "x-github-delivery": randomUUID(),
        "x-hub-signature-256": signature,
      },
    };
  });
}
