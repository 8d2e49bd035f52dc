import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { TOKEN_MARGIN_MS, type JobToken } from "../../src/credentials/index.js";
import { RenewableToken } from "../../src/credentials/renewable-token.js";
import { TokenPorts } from "../../src/github/token-port.js";
import type { Job } from "../../src/jobs/job.js";
import type { Logger } from "../../src/workflow/deps.js";

/** A job's token renewed while the job works: a build may outlast the hour an installation token lives. */

const quiet = { info: () => {}, warn: () => {}, error: () => {}, debug: () => {} } as unknown as Logger;
const tokenLeft = (token: string, ms: number): JobToken => ({
  token,
  expiresAt: new Date(Date.now() + ms).toISOString(),
  permissions: { contents: "write" },
});
const HOUR = 3600_000;

/** A clock the test moves. */
function testClock(start = Date.now()) {
  let now = start;
  return { now: () => now, advance: (ms: number) => void (now += ms) };
}

describe("RenewableToken", () => {
  it("uses the token it was handed while it has more than the margin left, and asks for nothing", async () => {
    let asked = 0;
    const handed = tokenLeft("ghs_handed", TOKEN_MARGIN_MS + 60_000);
    const token = new RenewableToken(handed, async () => (asked++, tokenLeft("ghs_fresh", HOUR)));
    expect(await token.current()).toBe(handed);
    expect(asked).toBe(0);
  });

  it("renews a token with less than the margin left once, however many uses ask at the same time", async () => {
    let asked = 0;
    const token = new RenewableToken(tokenLeft("ghs_old", TOKEN_MARGIN_MS - 1_000), async () => {
      asked++;
      await new Promise((resolve) => setTimeout(resolve, 20));
      return tokenLeft("ghs_fresh", HOUR);
    });
    const used = await Promise.all([token.current(), token.current(), token.current()]);
    expect(used.map((one) => one.token)).toEqual(["ghs_fresh", "ghs_fresh", "ghs_fresh"]);
    expect((await token.current()).token).toBe("ghs_fresh");
    expect(token.held.token).toBe("ghs_fresh");
    expect(asked).toBe(1);
  });

  it("works on with the token it has when no fresh one comes, and asks again a minute later, not at every use", async () => {
    const answers: Array<() => Promise<JobToken | null>> = [
      async () => null,
      async () => Promise.reject(new Error("no intake answered")),
      async () => tokenLeft("ghs_fresh", HOUR),
    ];
    let asked = 0;
    const failures: unknown[] = [];
    const clock = testClock();
    const old = tokenLeft("ghs_old", TOKEN_MARGIN_MS - 1_000);
    const token = new RenewableToken(
      old,
      () => answers[asked++]?.() ?? Promise.resolve(null),
      (error) => failures.push(error),
      clock.now,
    );

    expect(await token.current()).toBe(old);
    expect(await token.current()).toBe(old);
    expect(asked).toBe(1);
    // A minute on, it asks again (and that fails too: an error this time).
    clock.advance(61_000);
    expect(await token.current()).toBe(old);
    expect(asked).toBe(2);
    expect(failures.map((error) => (error as Error).message)).toEqual(["no fresher token came", "no intake answered"]);
    // And again a minute after that: this time a fresh one comes.
    clock.advance(61_000);
    expect((await token.current()).token).toBe("ghs_fresh");
    expect(asked).toBe(3);
  });

  it("keeps its token when the answer is no fresher than the one it has", async () => {
    const old = tokenLeft("ghs_old", TOKEN_MARGIN_MS - 1_000);
    const token = new RenewableToken(old, async () => ({ ...old, token: "ghs_same_age" }));
    expect(await token.current()).toBe(old);
  });

  describe("with a renewal that never answers", () => {
    beforeEach(() => void vi.useFakeTimers());
    afterEach(() => void vi.useRealTimers());

    it("a use waits a few seconds for it while the token held is still good for minutes, then goes on with that one", async () => {
      const held = tokenLeft("ghs_held", TOKEN_MARGIN_MS - 60_000);
      const token = new RenewableToken(held, () => new Promise<JobToken | null>(() => {}));
      let used: JobToken | undefined;
      void token.current().then((one) => (used = one));
      await vi.advanceTimersByTimeAsync(4_000);
      expect(used).toBeUndefined();
      await vi.advanceTimersByTimeAsync(1_500);
      expect(used).toBe(held);
    });

    it("a use with a token about to lapse waits for the renewal, and gives up on it after two minutes", async () => {
      const failures: unknown[] = [];
      const held = tokenLeft("ghs_held", 30_000);
      const token = new RenewableToken(
        held,
        () => new Promise<JobToken | null>(() => {}),
        (error) => failures.push(error),
      );
      let used: JobToken | undefined;
      void token.current().then((one) => (used = one));
      await vi.advanceTimersByTimeAsync(60_000);
      expect(used).toBeUndefined();
      await vi.advanceTimersByTimeAsync(61_000);
      expect(used).toBe(held);
      expect(String(failures[0])).toMatch(/no answer in 120 s/);
    });
  });
});

describe("a job's GitHub ports on a renewable token", () => {
  let server: Server;
  let baseUrl: string;
  const seen: Array<{ path: string; authorization: string | undefined }> = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      seen.push({ path: req.url ?? "", authorization: req.headers.authorization });
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify({ number: 1, title: "Greet by name", body: "", user: { login: "maintainer" } }));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => new Promise<void>((resolve) => server.close(() => resolve())));

  it("send each request, and give git, the token as it is at that moment: renewed once it runs low", async () => {
    const job = {
      installationId: 7,
      repository: {
        owner: "octo",
        name: "repo",
        cloneUrl: "https://github.com/octo/repo.git",
        defaultBranch: "main",
        htmlUrl: "https://github.com/octo/repo",
      },
      number: 1,
    } as Job;
    let asked = 0;
    const clock = testClock();
    // Enough left to start with; a minute later it is inside the margin.
    const token = new RenewableToken(
      tokenLeft("ghs_first", TOKEN_MARGIN_MS + 30_000),
      async () => (asked++, tokenLeft("ghs_second", HOUR)),
      () => {},
      clock.now,
    );
    const ports = new TokenPorts({
      baseUrl,
      webUrl: "https://github.com",
      log: quiet,
      isOwnComment: () => false,
    }).portsFor(job, () => token.current());

    await ports.work.info();
    expect(await ports.work.gitToken()).toBe("ghs_first");
    clock.advance(60_000);
    await ports.work.info();
    await ports.reply.info();
    expect(await ports.work.gitToken()).toBe("ghs_second");
    expect(seen.map((request) => request.authorization)).toEqual([
      "token ghs_first",
      "token ghs_second",
      "token ghs_second",
    ]);
    expect(asked).toBe(1);
  });
});
