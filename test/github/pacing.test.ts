import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { performance } from "node:perf_hooks";
import { Octokit } from "@octokit/rest";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { pacing, type PacingOptions, type SharedGates } from "../../src/github/pacing.js";

/**
 * GitHub, doubled at the HTTP boundary: every request's arrival is recorded, and `reply` decides the
 * answer (and how long the server holds it, to count requests in flight).
 */
interface Arrival {
  method: string;
  path: string;
  /** performance.now() when the request's headers arrived. */
  at: number;
}
interface Reply {
  status?: number;
  headers?: Record<string, string>;
  body?: unknown;
  holdMs?: number;
}

const arrivals: Arrival[] = [];
/**
 * When each request left the client (the pacing promises start times; arrivals add the network's
 * jitter, e.g. a first request's connection set-up, which can shrink the gap seen by the server).
 */
const sent: Arrival[] = [];
let inFlight = 0;
let maxInFlight = 0;
let reply: (arrival: Arrival, index: number) => Reply = () => ({});

let server: Server;
let base: string;

/** Slack for timer rounding (the gates count whole milliseconds). */
const SLACK_MS = 3;
// Only cumulative times are checked (the k-th send at least k gaps after the first call): the gate reserves
// start times, and Octokit's own work before `fetch` can delay one send more than the next, so two sends
// can be closer than the gap on a busy machine.
const SECONDARY_LIMIT = "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.";

function readBody(request: IncomingMessage): Promise<void> {
  return new Promise((resolve, reject) => {
    request.on("data", () => {});
    request.on("end", resolve);
    request.on("error", reject);
  });
}

beforeAll(async () => {
  server = createServer(async (request, response) => {
    const arrival: Arrival = { method: request.method ?? "", path: new URL(request.url ?? "/", "http://x").pathname, at: performance.now() };
    const index = arrivals.push(arrival) - 1;
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    await readBody(request);
    const answer = reply(arrival, index);
    if (answer.holdMs) await new Promise((resolve) => setTimeout(resolve, answer.holdMs));
    const body = answer.body ?? (arrival.path.endsWith("/graphql") ? { data: { viewer: { login: "bot" } } } : {});
    inFlight--;
    response.writeHead(answer.status ?? 200, { "content-type": "application/json; charset=utf-8", ...answer.headers });
    response.end(JSON.stringify(body));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // Warm up fetch, so the first timed request measures the plugin, not undici's start-up.
  await (await fetch(`${base}/warm-up`)).text();
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
});

beforeEach(() => {
  arrivals.length = 0;
  sent.length = 0;
  inFlight = 0;
  maxInFlight = 0;
  reply = () => ({});
});

const Paced = Octokit.plugin(pacing);

const recordingFetch: typeof fetch = (input, init) => {
  sent.push({ method: init?.method ?? "GET", path: new URL(String(input)).pathname, at: performance.now() });
  return fetch(input, init);
};

/** An Octokit with the plugin; no gaps and a short second unless the test says otherwise. */
function paced(options: Partial<PacingOptions> = {}, baseUrl = base) {
  const pacingOptions: PacingOptions = { onRateLimit: () => false, gapsMs: { write: 0, notification: 0, search: 0 }, secondMs: 10, ...options };
  return new Paced({ baseUrl, pacing: pacingOptions, request: { fetch: recordingFetch } });
}

const gaps = (list: Arrival[]) => list.slice(1).map((arrival, i) => arrival.at - list[i]!.at);
const seen = () => arrivals.map((arrival) => `${arrival.method} ${arrival.path}`);

/** The rejection of `promise` (fails the test if it resolves). */
async function rejection(promise: Promise<unknown>): Promise<{ status?: number; message: string }> {
  try {
    await promise;
  } catch (error) {
    return error as { status?: number; message: string };
  }
  throw new Error("expected the request to fail");
}

describe("pacing: writes", () => {
  it("starts writes (POST, PATCH, DELETE, GraphQL) at least the write gap apart, the first at once", async () => {
    const octokit = paced({ gapsMs: { write: 400, notification: 0, search: 0 } });
    const start = performance.now();
    await Promise.all([
      octokit.request("POST /repos/{owner}/{repo}/git/refs", { owner: "o", repo: "r", ref: "refs/heads/x", sha: "a".repeat(40) }),
      octokit.request("PATCH /repos/o/r/git/refs/heads/x", { sha: "b".repeat(40) }),
      octokit.request("DELETE /repos/o/r/git/refs/heads/x"),
      octokit.graphql("query { viewer { login } }"),
    ]);

    expect(seen()).toEqual(["POST /repos/o/r/git/refs", "PATCH /repos/o/r/git/refs/heads/x", "DELETE /repos/o/r/git/refs/heads/x", "POST /graphql"]);
    // Bounds far below the gap, so a loaded machine does not fail them.
    expect(sent[0]!.at - start).toBeLessThan(150);
    expect(arrivals[0]!.at - start).toBeLessThan(200);
    expect(sent).toHaveLength(4);
    // The k-th write is let go k gaps after the first, which left no earlier than the calls.
    sent.forEach((request, k) => expect(request.at - start).toBeGreaterThanOrEqual(k * 400 - SLACK_MS));
  });

  it("shares one installation's gates between its Octokits (one per job token), and only theirs", async () => {
    const gapsMs = { write: 150, notification: 0, search: 0 };
    const [first, second, other] = [paced({ gapsMs, id: "7-ack" }), paced({ gapsMs, id: "7-ack" }), paced({ gapsMs, id: "8-ack" })];
    const start = performance.now();
    await Promise.all([
      first.request("POST /repos/o/r/issues/comments/1/reactions", { content: "eyes" }),
      second.request("POST /repos/o/r/issues/comments/2/reactions", { content: "eyes" }),
      other.request("POST /repos/o/r/issues/comments/3/reactions", { content: "eyes" }),
    ]);
    const at = (commentId: number) => sent.find((request) => request.path.includes(`/comments/${commentId}/`))!.at - start;
    // The same installation's second Octokit waits for the first's gap; another installation does not.
    expect(at(2)).toBeGreaterThanOrEqual(150 - SLACK_MS);
    expect(at(3)).toBeLessThan(at(2));
  });

  it("holds comments (a notifying path) the notification gap apart, other writes only the write gap", async () => {
    const octokit = paced({ gapsMs: { write: 20, notification: 200, search: 0 } });
    const comment = () => octokit.rest.issues.createComment({ owner: "o", repo: "r", issue_number: 1, body: "hi" });
    const start = performance.now();
    await Promise.all([comment(), octokit.request("PATCH /repos/o/r/git/refs/heads/main", { sha: "c".repeat(40) }), comment()]);

    // The ref update, not notifying, leaves after the write gap, before the second comment.
    expect(seen()).toEqual(["POST /repos/o/r/issues/1/comments", "PATCH /repos/o/r/git/refs/heads/main", "POST /repos/o/r/issues/1/comments"]);
    const [, update, second] = sent as [Arrival, Arrival, Arrival];
    expect(update.at - start).toBeGreaterThanOrEqual(20 - SLACK_MS);
    expect(second.at - start).toBeGreaterThanOrEqual(200 - SLACK_MS);
  });

  it("strips GitHub Enterprise's /api/v3 prefix before matching notifying paths", async () => {
    const octokit = paced({ gapsMs: { write: 10, notification: 150, search: 0 } }, `${base}/api/v3`);
    // An absolute URL (as in a `next` link or a URL from a payload) carries the prefix into the hook.
    const absolute = () => octokit.request(`POST ${base}/api/v3/repos/o/r/issues/1/comments`, { body: "hi" });
    const start = performance.now();
    await Promise.all([octokit.rest.issues.createComment({ owner: "o", repo: "r", issue_number: 1, body: "hi" }), absolute(), absolute()]);

    expect(seen()).toEqual(Array(3).fill("POST /api/v3/repos/o/r/issues/1/comments"));
    expect(sent).toHaveLength(3);
    sent.forEach((request, k) => expect(request.at - start).toBeGreaterThanOrEqual(k * 150 - SLACK_MS));
  });
});

describe("pacing: reads and concurrency", () => {
  it("starts searches at least the search gap apart, and other reads at once", async () => {
    const octokit = paced({ gapsMs: { write: 0, notification: 0, search: 100 } });
    const start = performance.now();
    await Promise.all([
      octokit.rest.search.issuesAndPullRequests({ q: "repo:o/r is:open" }),
      octokit.rest.search.issuesAndPullRequests({ q: "repo:o/r is:closed" }),
      octokit.request("GET /repos/o/r"),
    ]);

    expect(seen().filter((line) => line.startsWith("GET /search/"))).toHaveLength(2);
    const searches = sent.filter((request) => request.path === "/search/issues");
    expect(searches[1]!.at - start).toBeGreaterThanOrEqual(100 - SLACK_MS);
    expect(sent.find((request) => request.path === "/repos/o/r")!.at - start).toBeLessThan(searches[1]!.at - start);
  });

  it("does not hold reads back behind the write gate", async () => {
    const octokit = paced({ gapsMs: { write: 800, notification: 0, search: 0 } });
    const start = performance.now();
    const first = octokit.request("POST /repos/o/r/git/refs", { ref: "refs/heads/a", sha: "a".repeat(40) });
    const second = octokit.request("POST /repos/o/r/git/refs", { ref: "refs/heads/b", sha: "a".repeat(40) });
    const read = octokit.request("GET /repos/{owner}/{repo}", { owner: "o", repo: "r" });
    await read;
    const readAt = performance.now() - start;
    await Promise.all([first, second]);

    // The first write and the read leave together (in either order); the second write waits its turn.
    expect(seen().slice(0, 2).sort()).toEqual(["GET /repos/o/r", "POST /repos/o/r/git/refs"]);
    expect(seen()[2]).toBe("POST /repos/o/r/git/refs");
    expect(readAt).toBeLessThan(400);
    expect(sent[2]!.at - start).toBeGreaterThanOrEqual(800 - SLACK_MS);
  });

  it("keeps at most ten requests in flight, and runs the rest as slots free up", async () => {
    reply = () => ({ holdMs: 300 });
    const octokit = paced();
    const responses = await Promise.all(Array.from({ length: 15 }, (_, i) => octokit.request("GET /repos/o/r/issues/{issue_number}", { issue_number: i + 1 })));

    expect(responses).toHaveLength(15);
    expect(arrivals).toHaveLength(15);
    expect(maxInFlight).toBe(10);
    // The eleventh waited for one of the first ten to be answered.
    const byTime = [...arrivals].sort((a, b) => a.at - b.at);
    expect(byTime[10]!.at - byTime[0]!.at).toBeGreaterThanOrEqual(300 - SLACK_MS);
  });

  it("runs token requests one at a time, outside the write gate", async () => {
    reply = () => ({ status: 201, body: { token: "t", expires_at: "2030-01-01T00:00:00Z" }, holdMs: 30 });
    const octokit = paced({ gapsMs: { write: 1_000, notification: 0, search: 0 } });
    const start = performance.now();
    await Promise.all(Array.from({ length: 3 }, () => octokit.request("POST /app/installations/{installation_id}/access_tokens", { installation_id: 1 })));
    const tokensTook = performance.now() - start;

    expect(seen()).toEqual(Array(3).fill("POST /app/installations/1/access_tokens"));
    expect(maxInFlight).toBe(1);
    // Three writes would take two write gaps (2 s); three held token requests take about 90 ms.
    expect(tokensTook).toBeLessThan(1_000);

    // Nor did they take the write gate's turn: the first real write leaves at once.
    reply = () => ({});
    const writeStart = performance.now();
    await octokit.request("POST /repos/o/r/git/refs", { ref: "refs/heads/a", sha: "a".repeat(40) });
    expect(arrivals[3]!.at - writeStart).toBeLessThan(500);
  });
});

describe("pacing: retries", () => {
  it("retries a 502 after one back-off unit and returns the answer", async () => {
    reply = (_, index) => (index === 0 ? { status: 502, body: { message: "Bad Gateway" } } : { body: { ok: true } });
    const octokit = paced({ secondMs: 50 });
    const response = await octokit.request("GET /repos/o/r");

    expect(response.data).toEqual({ ok: true });
    expect(arrivals).toHaveLength(2);
    const [gap] = gaps(arrivals) as [number];
    expect(gap).toBeGreaterThanOrEqual(50 - SLACK_MS);
    expect(gap).toBeLessThan(400);
  });

  it("does not retry a 404", async () => {
    reply = () => ({ status: 404, body: { message: "Not Found" } });
    const octokit = paced({ secondMs: 10 });
    const error = await rejection(octokit.request("GET /repos/o/missing"));

    expect(error.status).toBe(404);
    expect(arrivals).toHaveLength(1);
  });

  it("tries a failing request four times (back-off 1, 4, 9 units), then rejects with its status", async () => {
    reply = () => ({ status: 500, body: { message: "Server Error" } });
    const octokit = paced({ secondMs: 20 });
    const error = await rejection(octokit.request("GET /repos/o/r"));

    expect(error.status).toBe(500);
    expect(arrivals).toHaveLength(4);
    const waits = gaps(arrivals);
    [20, 80, 180].forEach((wait, i) => expect(waits[i]).toBeGreaterThanOrEqual(wait - SLACK_MS));
  });
});

describe("pacing: rate limits", () => {
  it("asks onRateLimit about a secondary limit and waits retry-after units before trying again", async () => {
    reply = (_, index) => (index === 0 ? { status: 403, headers: { "retry-after": "1" }, body: { message: SECONDARY_LIMIT } } : { status: 201, body: { number: 7 } });
    const onRateLimit = vi.fn<PacingOptions["onRateLimit"]>(() => true);
    const octokit = paced({ onRateLimit, secondMs: 100 });
    const response = await octokit.rest.issues.create({ owner: "o", repo: "r", title: "t" });

    expect(response.data).toEqual({ number: 7 });
    expect(onRateLimit).toHaveBeenCalledTimes(1);
    expect(onRateLimit).toHaveBeenCalledWith("secondary", 1, { method: "POST", url: `${base}/repos/o/r/issues` }, 0);
    expect(arrivals).toHaveLength(2);
    const [gap] = gaps(arrivals) as [number];
    expect(gap).toBeGreaterThanOrEqual(100 - SLACK_MS);
    // One unit of secondMs, not GitHub's second nor the 60-unit fallback.
    expect(gap).toBeLessThan(900);
  });

  it("gives up on a secondary limit when onRateLimit says no", async () => {
    reply = () => ({ status: 403, headers: { "retry-after": "1" }, body: { message: SECONDARY_LIMIT } });
    const onRateLimit = vi.fn<PacingOptions["onRateLimit"]>(() => false);
    const octokit = paced({ onRateLimit, secondMs: 10 });
    const error = await rejection(octokit.rest.issues.create({ owner: "o", repo: "r", title: "t" }));

    expect(error.status).toBe(403);
    expect(error.message).toMatch(/secondary rate limit/);
    expect(onRateLimit).toHaveBeenCalledTimes(1);
    expect(arrivals).toHaveLength(1);
  });

  it("asks onRateLimit about a primary limit with the seconds until the reset, and waits them", async () => {
    const reset = String(Math.floor(Date.now() / 1000) + 1);
    reply = (_, index) =>
      index === 0 ? { status: 403, headers: { "x-ratelimit-remaining": "0", "x-ratelimit-reset": reset }, body: { message: "API rate limit exceeded for installation ID 1." } } : { body: { ok: true } };
    const onRateLimit = vi.fn<PacingOptions["onRateLimit"]>(() => true);
    const octokit = paced({ onRateLimit, secondMs: 20 });
    const response = await octokit.request("GET /repos/o/r");

    expect(response.data).toEqual({ ok: true });
    expect(onRateLimit).toHaveBeenCalledTimes(1);
    const [kind, after, request, retryCount] = onRateLimit.mock.calls[0]!;
    expect([kind, request, retryCount]).toEqual(["primary", { method: "GET", url: `${base}/repos/o/r` }, 0]);
    expect(after).toBeGreaterThanOrEqual(1);
    expect(after).toBeLessThanOrEqual(3);
    expect(arrivals).toHaveLength(2);
    expect(gaps(arrivals)[0]).toBeGreaterThanOrEqual(after * 20 - SLACK_MS);
  });

  it("does not retry a plain 403 (no rate limit)", async () => {
    reply = () => ({ status: 403, body: { message: "Resource not accessible by integration" } });
    const onRateLimit = vi.fn<PacingOptions["onRateLimit"]>(() => true);
    const error = await rejection(paced({ onRateLimit }).request("GET /repos/o/r"));

    expect(error.status).toBe(403);
    expect(onRateLimit).not.toHaveBeenCalled();
    expect(arrivals).toHaveLength(1);
  });

  it("treats a GraphQL RATE_LIMITED error as a primary limit", async () => {
    reply = (_, index) => (index === 0 ? { body: { data: null, errors: [{ type: "RATE_LIMITED", message: "API rate limit exceeded" }] } } : { body: { data: { viewer: { login: "bot" } } } });
    const onRateLimit = vi.fn<PacingOptions["onRateLimit"]>(() => true);
    const result = await paced({ onRateLimit }).graphql<{ viewer: { login: string } }>("query { viewer { login } }");

    expect(result.viewer.login).toBe("bot");
    expect(onRateLimit).toHaveBeenCalledTimes(1);
    expect(onRateLimit.mock.calls[0]![0]).toBe("primary");
    expect(arrivals).toHaveLength(2);
  });
});

describe("pacing: GitHub Enterprise GraphQL", () => {
  // On GHE, @octokit/graphql turns a `.../api/v3` baseUrl into an absolute `.../api/graphql` URL: still GraphQL.
  it("treats a GraphQL RATE_LIMITED error on GHE (POST /api/graphql) as a primary limit", async () => {
    reply = (_, index) => (index === 0 ? { body: { data: null, errors: [{ type: "RATE_LIMITED", message: "API rate limit exceeded" }] } } : { body: { data: { viewer: { login: "bot" } } } });
    const onRateLimit = vi.fn<PacingOptions["onRateLimit"]>(() => true);
    const octokit = paced({ onRateLimit }, `${base}/api/v3`);
    const result = await octokit.graphql<{ viewer: { login: string } }>("query { viewer { login } }");

    expect(seen()[0]).toBe("POST /api/graphql");
    expect(result.viewer.login).toBe("bot");
    expect(onRateLimit).toHaveBeenCalledWith("primary", expect.any(Number), { method: "POST", url: `${base}/api/graphql` }, 0);
  });
});

describe("pacing: gates shared with other processes", () => {
  /** Gates another process shares (Redis, in the App): what was asked of them, each answering `waitMs`, or failing. */
  function sharedGates(answer: () => Promise<number>): SharedGates & { asked: string[] } {
    const asked: string[] = [];
    return { asked, reserve: (key: string, gapMs: number) => (asked.push(`${key} ${gapMs}`), answer()) };
  }

  it("reserves each write's start (and a comment's notification gap) from the shared gates under the installation's id, and waits what they say; reads ask nothing", async () => {
    const gates = sharedGates(async () => 250);
    const octokit = paced({ id: "7-ack", gapsMs: { write: 1_000, notification: 3_000, search: 2_000 }, shared: gates });
    const start = performance.now();
    await octokit.request("POST /repos/o/r/issues/comments/1/reactions", { content: "eyes" });
    await octokit.request("POST /repos/o/r/issues/1/comments", { body: "hi" });
    await octokit.request("GET /repos/o/r/collaborators/{username}/permission", { username: "maintainer" });

    expect(gates.asked).toEqual(["7-ack:write 1000", "7-ack:write 1000", "7-ack:notification 3000"]);
    // Three waits of 250 ms the gates asked for, and none of this process's own one-second gaps.
    expect(sent[1]!.at - start).toBeGreaterThanOrEqual(3 * 250 - SLACK_MS);
    expect(seen()).toContain("GET /repos/o/r/collaborators/maintainer/permission");
  });

  it("paces in this process alone while the shared gates fail", async () => {
    const gates = sharedGates(async () => Promise.reject(new Error("Redis is down")));
    const octokit = paced({ id: "8-ack", gapsMs: { write: 300, notification: 0, search: 0 }, shared: gates });
    const start = performance.now();
    await Promise.all([1, 2].map((n) => octokit.request("POST /repos/o/r/issues/comments/{id}/reactions", { id: n, content: "eyes" })));

    expect(gates.asked).toHaveLength(2);
    expect(sent).toHaveLength(2);
    expect(sent[1]!.at - start).toBeGreaterThanOrEqual(300 - SLACK_MS);
  });
});

describe("pacing: options", () => {
  it("refuses to construct without the pacing option", () => {
    expect(() => new Paced({ baseUrl: base })).toThrow(/`pacing` option/);
  });
});
