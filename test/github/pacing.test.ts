import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Octokit } from "@octokit/rest";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { pacing, type PacingOptions, type SharedGates } from "../../src/github/pacing.js";

/**
 * Time here is vitest's fake clock (setTimeout, clearTimeout and Date; the network is real): it moves
 * only when a test moves it, so a request's recorded time is exactly when the pacing let it go, on any
 * machine. Between moves, a test waits for events (a request arriving, a wait starting, a request
 * settling), never for a length of real time.
 *
 * The plugin sleeps with `node:timers/promises`, whose ESM export the fake clock does not replace: it
 * is routed here through the (faked) global setTimeout, and each wait it starts is counted.
 */
const events = vi.hoisted(() => {
  const waiters = new Set<() => void>();
  return {
    /** The milliseconds of each wait the plugin started, in order. */
    sleeps: [] as number[],
    waiters,
    /** Something happened: every `when` checks its condition again. */
    changed: () => [...waiters].forEach((check) => check()),
  };
});
vi.mock("node:timers/promises", async (importOriginal) => ({
  ...(await importOriginal<typeof import("node:timers/promises")>()),
  setTimeout: <T>(ms: number, value?: T) => {
    const slept = new Promise<T | undefined>((resolve) => globalThis.setTimeout(() => resolve(value), ms));
    events.sleeps.push(ms);
    events.changed();
    return slept;
  },
}));

/**
 * GitHub, doubled at the HTTP boundary: every request's arrival is recorded, and `reply` decides the
 * answer (and how long, on the fake clock, the server holds it, to count requests in flight).
 */
interface Arrival {
  method: string;
  path: string;
  /** Date.now() (the fake clock) when the request's headers arrived. */
  at: number;
}
interface Reply {
  status?: number;
  headers?: Record<string, string>;
  body?: unknown;
  holdMs?: number;
}

const arrivals: Arrival[] = [];
/** When each request left the client (called fetch), on the fake clock: when the pacing let it go. */
const sent: Arrival[] = [];
let inFlight = 0;
let maxInFlight = 0;
let reply: (arrival: Arrival, index: number) => Reply = () => ({});

let server: Server;
let base: string;

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
    const arrival: Arrival = {
      method: request.method ?? "",
      path: new URL(request.url ?? "/", "http://x").pathname,
      at: Date.now(),
    };
    const index = arrivals.push(arrival) - 1;
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    events.changed();
    await readBody(request);
    const answer = reply(arrival, index);
    if (answer.holdMs) await new Promise((resolve) => setTimeout(resolve, answer.holdMs));
    const body = answer.body ?? (arrival.path.endsWith("/graphql") ? { data: { viewer: { login: "bot" } } } : {});
    inFlight--;
    response.writeHead(answer.status ?? 200, { "content-type": "application/json; charset=utf-8", ...answer.headers });
    response.end(JSON.stringify(body));
  });
  // Idle connections stay open (the client's keep-alive timer is on the fake clock, and would not close them first).
  server.keepAliveTimeout = 0;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // Warm up fetch, so its start-up is not in any test.
  await (await fetch(`${base}/warm-up`)).text();
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
});

/**
 * Each test's clock starts an hour after the last one's (on whole seconds): the gates of an id are
 * shared by every Octokit with that id, across tests too, and none is left reserved into the next test.
 */
let epoch = Date.UTC(2030, 0, 1);
/** The fake clock when the test began. */
let start = 0;

beforeEach(() => {
  epoch += 3_600_000;
  vi.useFakeTimers({ now: epoch, toFake: ["setTimeout", "clearTimeout", "Date"] });
  start = Date.now();
  arrivals.length = 0;
  sent.length = 0;
  events.sleeps.length = 0;
  inFlight = 0;
  maxInFlight = 0;
  reply = () => ({});
});

afterEach(() => {
  vi.useRealTimers();
  events.waiters.clear();
});

/** Resolves once `ready()` holds, checked whenever a request arrives, a wait starts or a tracked request settles. */
function when(ready: () => boolean): Promise<void> {
  return new Promise((resolve) => {
    const check = () => {
      if (!ready()) return;
      events.waiters.delete(check);
      resolve();
    };
    events.waiters.add(check);
    check();
  });
}

/**
 * One turn of the event loop (setImmediate is real): every promise chain not waiting on the clock or the network has
 * run.
 */
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Lets what needs no timer happen (the clock stays put), and waits until every request that left has reached the
 * server.
 */
async function settle(): Promise<void> {
  await turn();
  await when(() => arrivals.length >= sent.length);
}

/** Moves the fake clock to `ms` after the test's start, firing the timers due on the way, then settles. */
async function clock(ms: number): Promise<void> {
  await vi.advanceTimersByTimeAsync(start + ms - Date.now());
  await settle();
}

/** A request whose settling is an event for `when`. */
function tracked<T>(promise: Promise<T>): { promise: Promise<T>; settled: boolean } {
  const call = { promise, settled: false };
  promise.then(
    () => ((call.settled = true), events.changed()),
    () => ((call.settled = true), events.changed()),
  );
  return call;
}

/**
 * Waits until `call`'s last try, answered, starts its wait to try again (a test with no gaps: every wait
 * is one before a retry); moves the clock on by `ms`; and checks it tried again then, and not a
 * millisecond sooner.
 */
async function retryAfter(call: { settled: boolean }, ms: number): Promise<void> {
  await turn();
  const tries = sent.length;
  await when(() => events.sleeps.length >= tries || call.settled);
  expect(call.settled, `a retry after try ${tries}`).toBe(false);
  if (ms > 0) {
    await vi.advanceTimersByTimeAsync(ms - 1);
    await turn();
    expect(sent, `no retry ${ms - 1} ms after try ${tries}`).toHaveLength(tries);
  }
  await vi.advanceTimersByTimeAsync(ms > 0 ? 1 : 0);
  await settle();
  expect(sent, `the retry ${ms} ms after try ${tries}`).toHaveLength(tries + 1);
}

const Paced = Octokit.plugin(pacing);

const recordingFetch: typeof fetch = (input, init) => {
  sent.push({ method: init?.method ?? "GET", path: new URL(String(input)).pathname, at: Date.now() });
  return fetch(input, init);
};

/** An Octokit with the plugin; no gaps and a short second unless the test says otherwise. */
function paced(options: Partial<PacingOptions> = {}, baseUrl = base) {
  const pacingOptions: PacingOptions = {
    onRateLimit: () => false,
    gapsMs: { write: 0, notification: 0, search: 0 },
    secondMs: 10,
    ...options,
  };
  return new Paced({ baseUrl, pacing: pacingOptions, request: { fetch: recordingFetch } });
}

/**
 * "<ms after the start> <method> <path>" for each request that left, by time (requests leaving in the same millisecond:
 * by name).
 */
const timeline = () =>
  [...sent]
    .sort((a, b) => a.at - b.at || `${a.method} ${a.path}`.localeCompare(`${b.method} ${b.path}`))
    .map((request) => `${request.at - start} ${request.method} ${request.path}`);
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
  it("starts writes (POST, PATCH, DELETE, GraphQL) the write gap apart, the first at once", async () => {
    const octokit = paced({ gapsMs: { write: 400, notification: 0, search: 0 } });
    const all = Promise.all([
      octokit.request("POST /repos/{owner}/{repo}/git/refs", {
        owner: "o",
        repo: "r",
        ref: "refs/heads/x",
        sha: "a".repeat(40),
      }),
      octokit.request("PATCH /repos/o/r/git/refs/heads/x", { sha: "b".repeat(40) }),
      octokit.request("DELETE /repos/o/r/git/refs/heads/x"),
      octokit.graphql("query { viewer { login } }"),
    ]);

    // The first leaves, and reaches GitHub, with the clock not moved: no timer on its way.
    await settle();
    expect(timeline()).toEqual(["0 POST /repos/o/r/git/refs"]);
    expect(arrivals.map((arrival) => arrival.at - start)).toEqual([0]);
    for (const ms of [400, 800, 1200]) await clock(ms);

    expect(timeline()).toEqual([
      "0 POST /repos/o/r/git/refs",
      "400 PATCH /repos/o/r/git/refs/heads/x",
      "800 DELETE /repos/o/r/git/refs/heads/x",
      "1200 POST /graphql",
    ]);
    await all;
    expect(seen()).toEqual([
      "POST /repos/o/r/git/refs",
      "PATCH /repos/o/r/git/refs/heads/x",
      "DELETE /repos/o/r/git/refs/heads/x",
      "POST /graphql",
    ]);
  });

  it("shares one installation's gates between its Octokits (one per job token), and only theirs", async () => {
    const gapsMs = { write: 150, notification: 0, search: 0 };
    const [first, second, other] = [
      paced({ gapsMs, id: "7-ack" }),
      paced({ gapsMs, id: "7-ack" }),
      paced({ gapsMs, id: "8-ack" }),
    ];
    const all = Promise.all([
      first.request("POST /repos/o/r/issues/comments/1/reactions", { content: "eyes" }),
      second.request("POST /repos/o/r/issues/comments/2/reactions", { content: "eyes" }),
      other.request("POST /repos/o/r/issues/comments/3/reactions", { content: "eyes" }),
    ]);
    await settle();
    await clock(150);

    // The same installation's second Octokit waits for the first's gap; another installation does not.
    expect(timeline()).toEqual([
      "0 POST /repos/o/r/issues/comments/1/reactions",
      "0 POST /repos/o/r/issues/comments/3/reactions",
      "150 POST /repos/o/r/issues/comments/2/reactions",
    ]);
    await all;
  });

  it("holds comments (a notifying path) the notification gap apart, other writes only the write gap", async () => {
    const octokit = paced({ gapsMs: { write: 20, notification: 200, search: 0 } });
    const comment = () => octokit.rest.issues.createComment({ owner: "o", repo: "r", issue_number: 1, body: "hi" });
    const all = Promise.all([
      comment(),
      octokit.request("PATCH /repos/o/r/git/refs/heads/main", { sha: "c".repeat(40) }),
      comment(),
    ]);
    await settle();
    for (const ms of [20, 200]) await clock(ms);

    // The ref update, not notifying, leaves after the write gap, before the second comment.
    expect(timeline()).toEqual([
      "0 POST /repos/o/r/issues/1/comments",
      "20 PATCH /repos/o/r/git/refs/heads/main",
      "200 POST /repos/o/r/issues/1/comments",
    ]);
    await all;
    expect(seen()).toEqual([
      "POST /repos/o/r/issues/1/comments",
      "PATCH /repos/o/r/git/refs/heads/main",
      "POST /repos/o/r/issues/1/comments",
    ]);
  });

  it("strips GitHub Enterprise's /api/v3 prefix before matching notifying paths", async () => {
    const octokit = paced({ gapsMs: { write: 10, notification: 150, search: 0 } }, `${base}/api/v3`);
    // An absolute URL (as in a `next` link or a URL from a payload) carries the prefix into the hook.
    const absolute = () => octokit.request(`POST ${base}/api/v3/repos/o/r/issues/1/comments`, { body: "hi" });
    const all = Promise.all([
      octokit.rest.issues.createComment({ owner: "o", repo: "r", issue_number: 1, body: "hi" }),
      absolute(),
      absolute(),
    ]);
    await settle();
    for (const ms of [150, 300]) await clock(ms);

    // Each comment the notification gap after the one before (the write gap alone would let them go 10 ms apart).
    expect(timeline()).toEqual([
      "0 POST /api/v3/repos/o/r/issues/1/comments",
      "150 POST /api/v3/repos/o/r/issues/1/comments",
      "300 POST /api/v3/repos/o/r/issues/1/comments",
    ]);
    await all;
    expect(seen()).toEqual(Array(3).fill("POST /api/v3/repos/o/r/issues/1/comments"));
  });
});

describe("pacing: reads and concurrency", () => {
  it("starts searches the search gap apart, and other reads at once", async () => {
    const octokit = paced({ gapsMs: { write: 0, notification: 0, search: 100 } });
    const all = Promise.all([
      octokit.rest.search.issuesAndPullRequests({ q: "repo:o/r is:open" }),
      octokit.rest.search.issuesAndPullRequests({ q: "repo:o/r is:closed" }),
      octokit.request("GET /repos/o/r"),
    ]);
    await settle();
    await clock(100);

    expect(timeline()).toEqual(["0 GET /repos/o/r", "0 GET /search/issues", "100 GET /search/issues"]);
    await all;
    expect(seen().filter((line) => line.startsWith("GET /search/"))).toHaveLength(2);
  });

  it("does not hold reads back behind the write gate", async () => {
    const octokit = paced({ gapsMs: { write: 800, notification: 0, search: 0 } });
    const first = octokit.request("POST /repos/o/r/git/refs", { ref: "refs/heads/a", sha: "a".repeat(40) });
    const second = octokit.request("POST /repos/o/r/git/refs", { ref: "refs/heads/b", sha: "a".repeat(40) });
    const read = octokit.request("GET /repos/{owner}/{repo}", { owner: "o", repo: "r" });

    // The first write and the read leave together; the second write waits its turn.
    await settle();
    expect(timeline()).toEqual(["0 GET /repos/o/r", "0 POST /repos/o/r/git/refs"]);
    // The read is answered with the clock where it was: it waited for no gap.
    await read;
    expect(Date.now()).toBe(start);
    await clock(800);

    expect(timeline()).toEqual(["0 GET /repos/o/r", "0 POST /repos/o/r/git/refs", "800 POST /repos/o/r/git/refs"]);
    await Promise.all([first, second]);
    expect(seen().slice(0, 2).sort()).toEqual(["GET /repos/o/r", "POST /repos/o/r/git/refs"]);
    expect(seen()[2]).toBe("POST /repos/o/r/git/refs");
  });

  it("keeps at most ten requests in flight, and runs the rest as slots free up", async () => {
    reply = () => ({ holdMs: 300 });
    const octokit = paced();
    const requests = Array.from({ length: 15 }, (_, i) =>
      octokit.request("GET /repos/o/r/issues/{issue_number}", { issue_number: i + 1 }),
    );

    await settle();
    expect(sent).toHaveLength(10);
    expect(maxInFlight).toBe(10);
    // The first ten are answered after 300 ms on the clock; only then do the other five leave.
    await clock(300);
    await Promise.all(requests.slice(0, 10));
    await settle();
    expect(sent).toHaveLength(15);
    await clock(600);

    const responses = await Promise.all(requests);
    expect(responses).toHaveLength(15);
    expect(maxInFlight).toBe(10);
    expect(arrivals.map((arrival) => arrival.at - start)).toEqual([
      ...Array<number>(10).fill(0),
      ...Array<number>(5).fill(300),
    ]);
  });

  it("runs token requests one at a time, outside the write gate", async () => {
    reply = () => ({ status: 201, body: { token: "t", expires_at: "2030-01-01T00:00:00Z" }, holdMs: 30 });
    const octokit = paced({ gapsMs: { write: 1_000, notification: 0, search: 0 } });
    const tokens = Array.from({ length: 3 }, () =>
      octokit.request("POST /app/installations/{installation_id}/access_tokens", { installation_id: 1 }),
    );
    const token = "POST /app/installations/1/access_tokens";

    // Each leaves when the one before is answered (held 30 ms), not a write gap (1 s) after it.
    await settle();
    expect(timeline()).toEqual([`0 ${token}`]);
    for (const [k, ms] of [30, 60].entries()) {
      await clock(ms);
      await tokens[k];
      await settle();
      expect(timeline()).toHaveLength(k + 2);
    }
    await clock(90);
    await Promise.all(tokens);
    expect(timeline()).toEqual([`0 ${token}`, `30 ${token}`, `60 ${token}`]);
    expect(maxInFlight).toBe(1);
    expect(seen()).toEqual(Array(3).fill(token));

    // Nor did they take the write gate's turn: the first real write leaves at once.
    reply = () => ({});
    const write = octokit.request("POST /repos/o/r/git/refs", { ref: "refs/heads/a", sha: "a".repeat(40) });
    await settle();
    expect(timeline()[3]).toBe("90 POST /repos/o/r/git/refs");
    await write;
  });
});

describe("pacing: retries", () => {
  it("retries a 502 after one back-off unit and returns the answer", async () => {
    reply = (_, index) => (index === 0 ? { status: 502, body: { message: "Bad Gateway" } } : { body: { ok: true } });
    const call = tracked(paced({ secondMs: 50 }).request("GET /repos/o/r"));
    await retryAfter(call, 50);

    expect((await call.promise).data).toEqual({ ok: true });
    expect(timeline()).toEqual(["0 GET /repos/o/r", "50 GET /repos/o/r"]);
    expect(arrivals).toHaveLength(2);
  });

  it("does not retry a 404", async () => {
    reply = () => ({ status: 404, body: { message: "Not Found" } });
    const octokit = paced({ secondMs: 10 });
    const error = await rejection(octokit.request("GET /repos/o/missing"));

    expect(error.status).toBe(404);
    expect(arrivals).toHaveLength(1);
    expect(events.sleeps).toEqual([]);
  });

  it("tries a failing request four times (back-off 1, 4, 9 units), then rejects with its status", async () => {
    reply = () => ({ status: 500, body: { message: "Server Error" } });
    const call = tracked(paced({ secondMs: 20 }).request("GET /repos/o/r"));
    await retryAfter(call, 20);
    await retryAfter(call, 80);
    await retryAfter(call, 180);
    const error = await rejection(call.promise);

    expect(error.status).toBe(500);
    expect(timeline()).toEqual(["0 GET /repos/o/r", "20 GET /repos/o/r", "100 GET /repos/o/r", "280 GET /repos/o/r"]);
    expect(arrivals).toHaveLength(4);
  });
});

describe("pacing: rate limits", () => {
  it("asks onRateLimit about a secondary limit and waits retry-after units before trying again", async () => {
    reply = (_, index) =>
      index === 0
        ? { status: 403, headers: { "retry-after": "1" }, body: { message: SECONDARY_LIMIT } }
        : { status: 201, body: { number: 7 } };
    const onRateLimit = vi.fn<PacingOptions["onRateLimit"]>(() => true);
    const call = tracked(
      paced({ onRateLimit, secondMs: 100 }).rest.issues.create({ owner: "o", repo: "r", title: "t" }),
    );
    // One unit of secondMs, not GitHub's second nor the 60-unit fallback.
    await retryAfter(call, 100);

    expect((await call.promise).data).toEqual({ number: 7 });
    expect(onRateLimit).toHaveBeenCalledTimes(1);
    expect(onRateLimit).toHaveBeenCalledWith("secondary", 1, { method: "POST", url: `${base}/repos/o/r/issues` }, 0);
    expect(timeline()).toEqual(["0 POST /repos/o/r/issues", "100 POST /repos/o/r/issues"]);
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
    // The reset is one second after the clock (on a whole second); a second's margin is added.
    const reset = String(start / 1000 + 1);
    reply = (_, index) =>
      index === 0
        ? {
            status: 403,
            headers: { "x-ratelimit-remaining": "0", "x-ratelimit-reset": reset },
            body: { message: "API rate limit exceeded for installation ID 1." },
          }
        : { body: { ok: true } };
    const onRateLimit = vi.fn<PacingOptions["onRateLimit"]>(() => true);
    const call = tracked(paced({ onRateLimit, secondMs: 20 }).request("GET /repos/o/r"));
    await retryAfter(call, 2 * 20);

    expect((await call.promise).data).toEqual({ ok: true });
    expect(onRateLimit.mock.calls).toEqual([["primary", 2, { method: "GET", url: `${base}/repos/o/r` }, 0]]);
    expect(timeline()).toEqual(["0 GET /repos/o/r", "40 GET /repos/o/r"]);
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
    reply = (_, index) =>
      index === 0
        ? { body: { data: null, errors: [{ type: "RATE_LIMITED", message: "API rate limit exceeded" }] } }
        : { body: { data: { viewer: { login: "bot" } } } };
    const onRateLimit = vi.fn<PacingOptions["onRateLimit"]>(() => true);
    const call = tracked(paced({ onRateLimit }).graphql<{ viewer: { login: string } }>("query { viewer { login } }"));
    // No reset named: tried again at once.
    await retryAfter(call, 0);

    expect((await call.promise).viewer.login).toBe("bot");
    expect(onRateLimit).toHaveBeenCalledTimes(1);
    expect(onRateLimit.mock.calls[0]![0]).toBe("primary");
    expect(arrivals).toHaveLength(2);
  });
});

describe("pacing: GitHub Enterprise GraphQL", () => {
  // On GHE, @octokit/graphql turns a `.../api/v3` baseUrl into an absolute `.../api/graphql` URL: still GraphQL.
  it("treats a GraphQL RATE_LIMITED error on GHE (POST /api/graphql) as a primary limit", async () => {
    reply = (_, index) =>
      index === 0
        ? { body: { data: null, errors: [{ type: "RATE_LIMITED", message: "API rate limit exceeded" }] } }
        : { body: { data: { viewer: { login: "bot" } } } };
    const onRateLimit = vi.fn<PacingOptions["onRateLimit"]>(() => true);
    const octokit = paced({ onRateLimit }, `${base}/api/v3`);
    const call = tracked(octokit.graphql<{ viewer: { login: string } }>("query { viewer { login } }"));
    await retryAfter(call, 0);

    expect(seen()[0]).toBe("POST /api/graphql");
    expect((await call.promise).viewer.login).toBe("bot");
    expect(onRateLimit).toHaveBeenCalledWith(
      "primary",
      expect.any(Number),
      { method: "POST", url: `${base}/api/graphql` },
      0,
    );
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
    const calls = tracked(
      (async () => {
        await octokit.request("POST /repos/o/r/issues/comments/1/reactions", { content: "eyes" });
        await octokit.request("POST /repos/o/r/issues/1/comments", { body: "hi" });
        await octokit.request("GET /repos/o/r/collaborators/{username}/permission", { username: "maintainer" });
      })(),
    );
    // Each wait the gates ask for, in turn, on the clock.
    for (const k of [1, 2, 3]) {
      await when(() => events.sleeps.length >= k || calls.settled);
      await vi.advanceTimersByTimeAsync(250);
    }
    await when(() => calls.settled || events.sleeps.length > 3);
    await calls.promise;

    expect(gates.asked).toEqual(["7-ack:write 1000", "7-ack:write 1000", "7-ack:notification 3000"]);
    // Three waits of 250 ms the gates asked for, and none of this process's own one-second gaps.
    expect(events.sleeps).toEqual([250, 250, 250]);
    expect(timeline()).toEqual([
      "250 POST /repos/o/r/issues/comments/1/reactions",
      "750 GET /repos/o/r/collaborators/maintainer/permission",
      "750 POST /repos/o/r/issues/1/comments",
    ]);
  });

  it("paces in this process alone while the shared gates fail", async () => {
    const gates = sharedGates(async () => Promise.reject(new Error("Redis is down")));
    const octokit = paced({ id: "8-ack", gapsMs: { write: 300, notification: 0, search: 0 }, shared: gates });
    const all = Promise.all(
      [1, 2].map((n) => octokit.request("POST /repos/o/r/issues/comments/{id}/reactions", { id: n, content: "eyes" })),
    );
    await settle();
    await clock(300);

    expect(gates.asked).toHaveLength(2);
    expect(timeline()).toEqual([
      "0 POST /repos/o/r/issues/comments/1/reactions",
      "300 POST /repos/o/r/issues/comments/2/reactions",
    ]);
    await all;
  });
});

describe("pacing: options", () => {
  it("refuses to construct without the pacing option", () => {
    expect(() => new Paced({ baseUrl: base })).toThrow(/`pacing` option/);
  });
});
