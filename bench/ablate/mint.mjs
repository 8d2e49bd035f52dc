// Job tokens with no webhooks around (intake.mjs has them during a burst): the App's JWT reused for
// minutes (app-jwt.ts) against @octokit/auth-app signing for an Octokit. The figure: time until 100
// installations have their first token, asked at once.
import { generateKeyPairSync } from "node:crypto";
import { createAppAuth } from "@octokit/auth-app";
import { Octokit } from "@octokit/rest";
import { JobTokens } from "../../lib/credentials/job-token.js";
import { appTokenMinter } from "../../lib/github/app-jwt.js";
import { interleaved, printRounds, verdict } from "./rounds.mjs";
import { startStub } from "./stub.mjs";

const INSTALLATIONS = 100;
const APP_ID = 4242;
const quiet = { info() {}, warn() {}, error() {} };

export async function run() {
  const stub = await startStub();
  const privateKey = generateKeyPairSync("rsa", {
    modulusLength: 2048,
    privateKeyEncoding: { type: "pkcs1", format: "pem" },
    publicKeyEncoding: { type: "spki", format: "pem" },
  }).privateKey;
  try {
    const appOctokit = new Octokit({
      authStrategy: createAppAuth,
      auth: { appId: APP_ID, privateKey },
      baseUrl: stub.url,
    });
    const sources = {
      "ours (AppJwt)": new JobTokens(appTokenMinter({ appId: APP_ID, privateKey, baseUrl: stub.url, log: quiet })),
      "library (@octokit/auth-app)": new JobTokens(async () => appOctokit),
    };
    let installation = 10_000;
    const wave = (source) =>
      Promise.all(
        Array.from({ length: INSTALLATIONS }, () =>
          source.forJob({ installationId: installation++, kind: "plan", repository: { name: "r" } }),
        ),
      );
    for (const source of Object.values(sources)) await wave(source); // warm: JIT, connections
    const results = await interleaved(Object.keys(sources), async (variant) => {
      const started = performance.now();
      await wave(sources[variant]);
      return performance.now() - started;
    });
    printRounds(`${INSTALLATIONS} first tokens at once, no webhooks`, "ms", results);
    const [ours, library] = Object.values(results);
    return [verdict("  app-jwt.ts vs @octokit/auth-app (no webhooks)", "ms", ours, library)];
  } finally {
    await stub.stop();
  }
}
