import nock from "nock";
import { Probot } from "probot";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { installationOctokit } from "../../src/github/installation-octokit.js";
import { APP_ID } from "../helpers/github-double.js";
import { testPrivateKey } from "../helpers/app.js";
import { PATIENCE_MS } from "../helpers/patience.js";

const SECONDARY_LIMIT = "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.";

interface LogLine {
  level: string;
  message: string;
}

/** Probot's own Octokit, with throttling and retries on as in production (Probot's defaults). */
function throttledApp() {
  // What Probot and the installation's Octokit log (its rate-limit decisions among them).
  const lines: LogLine[] = [];
  const log = {
    level: "trace",
    child: () => log,
    ...Object.fromEntries(
      ["trace", "debug", "info", "warn", "error", "fatal"].map((level) => [
        level,
        (object: unknown, message?: string) =>
          lines.push({ level, message: typeof object === "string" ? object : (message ?? "") }),
      ]),
    ),
  };
  const probot = new Probot({
    appId: APP_ID,
    privateKey: testPrivateKey(),
    log: log as unknown as NonNullable<ConstructorParameters<typeof Probot>[0]>["log"],
  });
  return { probot, lines };
}

/** GitHub for one installation: a token, the repository, and comment edits recorded into `received` as `owner N`. */
function githubFor(installationId: number, owner: string, received: string[]) {
  let count = 0;
  return nock("https://api.github.com")
    .persist()
    .post(`/app/installations/${installationId}/access_tokens`)
    .reply(201, {
      token: `ghs_token_for_${installationId}`,
      expires_at: new Date(Date.now() + 3600_000).toISOString(),
      permissions: { issues: "write" },
    })
    .get(`/repos/${owner}/repo`)
    .reply(200, { name: "repo", owner: { login: owner } })
    .patch(new RegExp(`^/repos/${owner}/repo/issues/comments/\\d+$`))
    .reply((_uri, body) => {
      received.push(`${owner} ${++count}`);
      return [200, { id: count, body: (body as { body: string }).body }];
    });
}

beforeEach(() => {
  nock.disableNetConnect();
});

afterEach(() => {
  vi.useRealTimers();
  nock.cleanAll();
  nock.enableNetConnect();
});

describe("installationOctokit", () => {
  it("paces each installation's writes on its own: B's first write goes out before A's burst is through", async () => {
    const { probot } = throttledApp();
    const received: string[] = [];
    githubFor(101, "alpha", received);
    githubFor(102, "bravo", received);
    const [a, b] = await Promise.all([installationOctokit(probot, 101), installationOctokit(probot, 102)]);
    // Both have their tokens before the writes start, so only the pacing of writes decides the order.
    await Promise.all([
      a.rest.repos.get({ owner: "alpha", repo: "repo" }),
      b.rest.repos.get({ owner: "bravo", repo: "repo" }),
    ]);
    const edit = (octokit: typeof a, owner: string, id: number) =>
      octokit.rest.issues.updateComment({ owner, repo: "repo", comment_id: id, body: `edit ${id}` });

    // GitHub's pacing of writes (one at a time, a second apart) applies within an installation only:
    // A's second write waits its turn; B's first write, sent while it waits, does not wait behind it.
    const burst = [edit(a, "alpha", 1), edit(a, "alpha", 2)];
    await vi.waitFor(() => expect(received).toContain("alpha 1"), { timeout: PATIENCE_MS });
    await Promise.all([...burst, edit(b, "bravo", 1)]);

    expect(received.filter((entry) => entry.startsWith("alpha"))).toEqual(["alpha 1", "alpha 2"]);
    expect(received.indexOf("bravo 1")).toBeLessThan(received.indexOf("alpha 2"));
  });

  it("waits out a secondary rate limit at most 3 times, then gives up with GitHub's words", async () => {
    // GitHub's retry-after is in seconds and writes are paced a second apart: fake time keeps this quick.
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date"] });
    const { probot, lines } = throttledApp();
    const attempts: number[] = [];
    nock("https://api.github.com")
      .persist()
      .post("/app/installations/103/access_tokens")
      .reply(201, {
        token: "ghs_token_for_103",
        expires_at: new Date(Date.now() + 3600_000).toISOString(),
        permissions: { issues: "write" },
      })
      .patch("/repos/charlie/repo/issues/comments/5")
      .reply(() => {
        attempts.push(attempts.length + 1);
        return [403, { message: SECONDARY_LIMIT }, { "retry-after": "1" }];
      });
    const octokit = await installationOctokit(probot, 103);

    let settled = false;
    const write = octokit.rest.issues
      .updateComment({ owner: "charlie", repo: "repo", comment_id: 5, body: "hello" })
      .finally(() => (settled = true));
    write.catch(() => undefined);
    while (!settled) await vi.advanceTimersByTimeAsync(250);

    await expect(write).rejects.toMatchObject({
      status: 403,
      message: expect.stringContaining("secondary rate limit"),
    });
    expect(attempts).toEqual([1, 2, 3, 4]);
    expect(lines.filter((line) => /rate limit hit/.test(line.message))).toEqual([
      { level: "warn", message: "secondary rate limit hit; retrying in 1 s" },
      { level: "warn", message: "secondary rate limit hit; retrying in 1 s" },
      { level: "warn", message: "secondary rate limit hit; retrying in 1 s" },
      { level: "warn", message: "secondary rate limit hit; giving up" },
    ]);
  });
});
