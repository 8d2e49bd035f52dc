// keep-alive-fetch.ts against Node's own fetch (undici), each under the same Octokit: the client's
// CPU per GitHub request (the stand-in GitHub is another process), 400 requests 8 at a time.
import { Octokit } from "@octokit/rest";
import { keepAliveFetch } from "../../lib/github/keep-alive-fetch.js";
import { interleaved, printRounds, verdict } from "./rounds.mjs";
import { cost, startStub } from "./stub.mjs";

const REQUESTS = 400;
const AT_ONCE = 8;

export async function run() {
  const stub = await startStub();
  try {
    const octokits = {
      "ours (keepAliveFetch)": new Octokit({ baseUrl: stub.url, request: { fetch: keepAliveFetch() } }),
      "library (Node's fetch)": new Octokit({ baseUrl: stub.url }),
    };
    const burst = async (octokit, count) => {
      let next = 0;
      await Promise.all(
        Array.from({ length: AT_ONCE }, async () => {
          while (next++ < count) await octokit.rest.issues.get({ owner: "o", repo: "r", issue_number: 1 });
        }),
      );
    };
    for (const octokit of Object.values(octokits)) await burst(octokit, 200); // warm: JIT, connections
    const results = await interleaved(Object.keys(octokits), async (variant) => {
      const { cpuUs } = await cost(() => burst(octokits[variant], REQUESTS));
      return cpuUs / REQUESTS;
    });
    printRounds("client CPU per request", "µs", results);
    const [ours, library] = Object.values(results);
    return [verdict("keep-alive-fetch.ts vs Node's fetch (CPU per Octokit request)", "µs", ours, library)];
  } finally {
    await stub.stop();
  }
}
