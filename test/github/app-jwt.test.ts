import { createPublicKey, createVerify, generateKeyPairSync } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { AppJwt, appTokenMinter } from "../../src/github/app-jwt.js";
import type { Logger } from "../../src/shared/logger.js";
import { startGitHubDouble, type GitHubDouble } from "../e2e/double/github-server.js";

const quiet: Logger = { info: () => {}, warn: () => {}, error: () => {} };

/**
 * The minter waits with `node:timers/promises`, whose ESM export vitest's fake clock does not replace:
 * it is routed here through the global setTimeout (faked where a test fakes it), and each wait it
 * starts, and ends, is counted.
 */
const events = vi.hoisted(() => {
  const waiters = new Set<() => void>();
  return {
    /** The milliseconds of each wait started, in order. */
    sleeps: [] as number[],
    /** Waits that have ended. */
    woke: 0,
    waiters,
    /** Something happened: every `when` checks its condition again. */
    changed: () => [...waiters].forEach((check) => check()),
  };
});
vi.mock("node:timers/promises", async (importOriginal) => ({
  ...(await importOriginal<typeof import("node:timers/promises")>()),
  setTimeout: <T>(ms: number, value?: T) => {
    const slept = new Promise<T | undefined>((resolve) =>
      globalThis.setTimeout(() => {
        events.woke++;
        resolve(value);
      }, ms),
    );
    events.sleeps.push(ms);
    events.changed();
    return slept;
  },
}));

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
 * One turn of the event loop (setImmediate is not faked): every promise chain not waiting on the clock or the network
 * has run.
 */
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe("the App's token (JWT)", () => {
  const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const pem = privateKey.export({ type: "pkcs1", format: "pem" }).toString();
  const claims = (token: string) =>
    JSON.parse(Buffer.from(token.split(".")[1] ?? "", "base64url").toString()) as {
      iat: number;
      exp: number;
      iss: number;
    };

  it("is an RS256 token for the App, issued a minute early and good for nine minutes", () => {
    const now = Date.parse("2026-11-23T12:00:00Z");
    const token = new AppJwt(42, pem).token(now);
    const [header, payload, signature] = token.split(".");
    expect(JSON.parse(Buffer.from(header ?? "", "base64url").toString())).toEqual({ alg: "RS256", typ: "JWT" });
    expect(claims(token)).toEqual({ iat: now / 1000 - 60, exp: now / 1000 - 60 + 540, iss: 42 });
    expect(
      createVerify("RSA-SHA256")
        .update(`${header}.${payload}`)
        .verify(createPublicKey(publicKey.export({ type: "spki", format: "pem" })), signature ?? "", "base64url"),
    ).toBe(true);
  });

  it("is signed once and reused for five minutes, then signed afresh", () => {
    const jwt = new AppJwt(42, pem);
    const now = Date.parse("2026-11-23T12:00:00Z");
    const first = jwt.token(now);
    expect(jwt.token(now + 4 * 60_000)).toBe(first);
    const later = jwt.token(now + 5 * 60_000 + 1);
    expect(later).not.toBe(first);
    expect(claims(later).iat).toBeGreaterThan(claims(first).iat);
  });
});

describe("job tokens minted with the App's own token", () => {
  let github: GitHubDouble;
  beforeAll(async () => {
    github = await startGitHubDouble({
      files: { "README.md": "hi\n" },
      issues: [{ title: "t", body: "b", author: "octocat" }],
      permissions: { maintainer: "write" },
    });
  });
  afterAll(async () => github?.stop());

  it("are granted by GitHub (the double checks the App's signature), narrowed to one repository", async () => {
    const mint = appTokenMinter({
      appId: github.appId,
      privateKey: github.privateKey ?? "",
      baseUrl: github.apiUrl,
      log: quiet,
    });
    const installationId = github.installationIds[0] ?? 0;
    const minter = await mint(installationId);
    const { data } = await minter.rest.apps.createInstallationAccessToken({
      installation_id: installationId,
      repositories: ["hello-world"],
      permissions: { contents: "read" },
    });
    expect(data.token).toMatch(/^ghs_/);
    const grants = github.requests.filter(
      (request) => request.path === `/app/installations/${installationId}/access_tokens`,
    );
    expect(grants.map((request) => [request.status, request.auth])).toEqual([[201, "app-jwt"]]);
  });

  it("are refused when signed with another key", async () => {
    const stranger = generateKeyPairSync("rsa", { modulusLength: 2048 })
      .privateKey.export({ type: "pkcs1", format: "pem" })
      .toString();
    const minter = await appTokenMinter({
      appId: github.appId,
      privateKey: stranger,
      baseUrl: github.apiUrl,
      log: quiet,
    })(github.installationIds[0] ?? 0);
    await expect(
      minter.rest.apps.createInstallationAccessToken({
        installation_id: github.installationIds[0] ?? 0,
        repositories: ["hello-world"],
      }),
    ).rejects.toMatchObject({ status: 401 });
  });
});

describe("job-token requests that GitHub does not grant at once", () => {
  let server: Server;
  let url = "";
  /** What the next requests are answered with, in order; then 201. */
  let answers: { status: number; body?: unknown; headers?: Record<string, string> }[] = [];
  /** Each request as it arrived, `at` on the fake clock. */
  let seen: { at: number; authorization: string | undefined; body: string }[] = [];
  const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const pem = privateKey.export({ type: "pkcs1", format: "pem" }).toString();
  const warnings: unknown[] = [];
  const log: Logger = { ...quiet, warn: (fields) => warnings.push(fields) };

  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = "";
      req.on("data", (chunk: Buffer) => (body += chunk.toString()));
      req.on("end", () => {
        seen.push({ at: Date.now(), authorization: req.headers.authorization, body });
        events.changed();
        const answer = answers.shift() ?? {
          status: 201,
          body: { token: "ghs_granted", expires_at: "2099-01-01T00:00:00Z", permissions: { issues: "write" } },
        };
        res.writeHead(answer.status, { "content-type": "application/json", ...answer.headers });
        res.end(JSON.stringify(answer.body ?? { message: "no" }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v3`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
  /** The fake clock when the test began: it moves only when the test moves it (the network is real). */
  let start = 0;
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date"] });
    start = Date.now();
    answers = [];
    seen = [];
    warnings.length = 0;
    events.sleeps.length = 0;
    events.woke = 0;
  });
  afterEach(() => {
    vi.useRealTimers();
    events.waiters.clear();
  });
  const mint = async () => {
    const minter = await appTokenMinter({ appId: 7, privateKey: pem, baseUrl: url, log, secondMs: 20 })(3);
    return minter.rest.apps.createInstallationAccessToken({
      installation_id: 3,
      repositories: ["hello-world"],
      permissions: { issues: "write" },
    });
  };
  /** When each request arrived, in milliseconds after the test's start. */
  const arrivedAt = () => seen.map((request) => request.at - start);

  /**
   * Waits until the last try, answered, starts its wait to try again; moves the clock on by `ms`,
   * checking the wait ends then and not a millisecond sooner; and waits for the retry to arrive.
   */
  async function retryAfter(call: { settled: boolean }, ms: number): Promise<void> {
    await when(() => (seen.length > 0 && events.sleeps.length >= seen.length) || call.settled);
    const tries = seen.length;
    expect(call.settled, `a retry after try ${tries}`).toBe(false);
    await vi.advanceTimersByTimeAsync(ms - 1);
    await turn();
    expect(events.woke, `still waiting ${ms - 1} ms after try ${tries}`).toBe(tries - 1);
    await vi.advanceTimersByTimeAsync(1);
    await turn();
    expect(events.woke, `done waiting ${ms} ms after try ${tries}`).toBe(tries);
    await when(() => seen.length > tries);
  }

  it("sends the repository and permissions, signed with the App's token", async () => {
    const { data } = await mint();
    expect(data).toEqual({
      token: "ghs_granted",
      expires_at: "2099-01-01T00:00:00Z",
      permissions: { issues: "write" },
    });
    expect(JSON.parse(seen[0]?.body ?? "")).toEqual({
      repositories: ["hello-world"],
      permissions: { issues: "write" },
    });
    expect(seen[0]?.authorization).toMatch(/^bearer [\w-]+\.[\w-]+\.[\w-]+$/);
  });

  it("tries again after a server error, waiting longer each time", async () => {
    answers = [{ status: 502 }, { status: 503 }];
    const call = tracked(mint());
    await retryAfter(call, 20);
    await retryAfter(call, 80);

    expect((await call.promise).data.token).toBe("ghs_granted");
    expect(arrivedAt()).toEqual([0, 20, 100]);
  });

  it("gives up after three retries, with GitHub's status", async () => {
    answers = [{ status: 500 }, { status: 500 }, { status: 500 }, { status: 500 }];
    const call = tracked(mint());
    for (const ms of [20, 80, 180]) await retryAfter(call, ms);

    await expect(call.promise).rejects.toMatchObject({ status: 500 });
    expect(arrivedAt()).toEqual([0, 20, 100, 280]);
  });

  it("does not retry a refusal", async () => {
    answers = [{ status: 404, body: { message: "Not Found" } }];
    const call = tracked(mint());
    await when(() => call.settled || events.sleeps.length > 0);
    expect(events.sleeps).toEqual([]);
    await expect(call.promise).rejects.toMatchObject({ status: 404, message: expect.stringContaining("Not Found") });
    expect(seen).toHaveLength(1);
  });

  it("waits out a secondary rate limit for as long as GitHub asks, and says so", async () => {
    answers = [
      { status: 403, body: { message: "You have exceeded a secondary rate limit" }, headers: { "retry-after": "2" } },
    ];
    const call = tracked(mint());
    await retryAfter(call, 2 * 20);

    expect((await call.promise).data.token).toBe("ghs_granted");
    expect(arrivedAt()).toEqual([0, 40]);
    expect(warnings).toEqual([expect.objectContaining({ status: 403, retryAfter: 2 })]);
  });

  it("waits a minute for a secondary rate limit that names no wait, not until the hourly quota resets", async () => {
    const reset = String(Math.floor(Date.now() / 1000) + 3600);
    answers = [
      {
        status: 403,
        body: { message: "You have exceeded a secondary rate limit" },
        headers: { "x-ratelimit-remaining": "4000", "x-ratelimit-reset": reset },
      },
    ];
    const call = tracked(mint());
    await retryAfter(call, 60 * 20);

    expect((await call.promise).data.token).toBe("ghs_granted");
    expect(arrivedAt()).toEqual([0, 60 * 20]);
  });

  it("fails at once when a rate limit asks for more than a minute", async () => {
    answers = [{ status: 429, body: { message: "slow down" }, headers: { "retry-after": "3600" } }];
    const call = tracked(mint());
    await when(() => call.settled || events.sleeps.length > 0);
    expect(events.sleeps).toEqual([]);
    await expect(call.promise).rejects.toMatchObject({ status: 429 });
    expect(seen).toHaveLength(1);
  });
});
