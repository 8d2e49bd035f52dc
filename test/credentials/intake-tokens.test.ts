import { createPublicKey, createVerify } from "node:crypto";
import nock from "nock";
import { Probot, ProbotOctokit } from "probot";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { loadEnv } from "../../src/config/env.js";
import { intakeTokens } from "../../src/credentials/intake.js";
import { APP_ID, githubDouble, INSTALLATION_ID, INSTALLATION_TOKEN } from "../helpers/github-double.js";
import { testPrivateKey } from "../helpers/app.js";

/**
 * The intake's job tokens: minted with the App's key and its own reused App token when the key is in
 * the environment (as `npm start` has it; the e2e tests run it too), else through Probot's own
 * authentication, as an App handed a Probot instance has it.
 */

beforeAll(() => nock.disableNetConnect());
afterEach(() => nock.cleanAll());

/** A Probot instance as an App function gets it: loaded, so its log is there. */
async function probot(): Promise<Probot> {
  const instance = new Probot({
    appId: APP_ID,
    privateKey: testPrivateKey(),
    logLevel: "fatal",
    Octokit: ProbotOctokit.defaults((defaults: Record<string, unknown>) => ({
      ...defaults,
      retry: { enabled: false },
      throttle: { enabled: false },
    })),
  });
  await instance.load(() => {});
  return instance;
}

/** Shaped like a PEM key (as Probot checks), but no key: node cannot read it. */
const BROKEN_KEY = "-----BEGIN RSA PRIVATE KEY-----\nbm90IGEga2V5\n-----END RSA PRIVATE KEY-----\n";
const planJob = { installationId: INSTALLATION_ID, kind: "plan" as const, repository: { name: "Hello-World" } };
const grants = (github: ReturnType<typeof githubDouble>) =>
  github.requests.filter((request) => request.path.endsWith("/access_tokens")).map((request) => request.body);

describe("intakeTokens", () => {
  it("without the App's key in the environment, mints through Probot's authentication, narrowed to the job's repository and kind", async () => {
    const github = githubDouble();
    const tokens = intakeTokens(await probot(), loadEnv({ APP_ID: String(APP_ID), PATH: process.env.PATH ?? "" }));
    const token = await tokens.forJob(planJob);
    expect(token).toMatchObject({ token: INSTALLATION_TOKEN, permissions: { contents: "write" } });
    expect(grants(github)).toEqual([
      {
        repositories: ["Hello-World"],
        permissions: { contents: "read", issues: "write", pull_requests: "write", metadata: "read", checks: "write" },
      },
    ]);
    // Reused while it has 40 minutes left: a second job on the repository costs no mint.
    expect(await tokens.forJob(planJob)).toEqual(token);
    expect(grants(github)).toHaveLength(1);
  });

  it("with the App's key in the environment, mints with its own App token, reuses the grant and does not cache a refusal", async () => {
    const seen: Array<{ authorization: string; userAgent: string; body: unknown }> = [];
    const api = nock("https://api.github.com")
      .post(/^\/app\/installations\/\d+\/access_tokens$/)
      .times(3)
      .reply(function (uri, body) {
        seen.push({
          authorization: String(this.req.headers.authorization),
          userAgent: String(this.req.headers["user-agent"]),
          body,
        });
        if (uri.includes("/404/")) return [404, { message: "Not Found" }];
        return [201, { token: "ghs_own", expires_at: new Date(Date.now() + 3_600_000).toISOString(), permissions: {} }];
      });
    const privateKey = testPrivateKey();
    const tokens = intakeTokens(
      await probot(),
      loadEnv({ APP_ID: String(APP_ID), PRIVATE_KEY: privateKey, PATH: process.env.PATH ?? "" }),
    );

    expect((await tokens.forJob(planJob)).token).toBe("ghs_own");
    expect(await tokens.forJob(planJob)).toMatchObject({ token: "ghs_own" });
    const refused = { ...planJob, installationId: 404 };
    await expect(tokens.forJob(refused)).rejects.toMatchObject({ status: 404 });
    await expect(tokens.forJob(refused)).rejects.toMatchObject({ status: 404 });

    // One grant for the two jobs; the refusal asked again. Each signed by Blueprint (not Probot's Octokit) with a JWT
    // from the App's key.
    expect(api.isDone()).toBe(true);
    expect(seen).toHaveLength(3);
    expect(seen[0]?.body).toMatchObject({ repositories: ["Hello-World"] });
    for (const { authorization, userAgent } of seen) {
      expect(userAgent).toBe("blueprint");
      const [header = "", payload = "", signature = ""] = authorization.replace(/^bearer /i, "").split(".");
      const valid = createVerify("RSA-SHA256")
        .update(`${header}.${payload}`)
        .verify(createPublicKey(privateKey), signature, "base64url");
      expect(valid).toBe(true);
      expect(JSON.parse(Buffer.from(payload, "base64url").toString("utf8"))).toMatchObject({ iss: APP_ID });
    }
  });

  it("with a key that does not parse, says so once and mints through Probot's authentication", async () => {
    const github = githubDouble();
    const app = await probot();
    const warn = vi.spyOn(app.log, "warn");
    const tokens = intakeTokens(
      app,
      loadEnv({ APP_ID: String(APP_ID), PRIVATE_KEY: BROKEN_KEY, PATH: process.env.PATH ?? "" }),
    );
    expect(warn).toHaveBeenCalledWith(
      expect.objectContaining({ err: expect.any(Error) }),
      expect.stringContaining("job tokens are requested through Probot's authentication"),
    );
    expect((await tokens.forJob(planJob)).token).toBe(INSTALLATION_TOKEN);
    expect(grants(github)).toHaveLength(1);
    expect(warn).toHaveBeenCalledTimes(1);
  });
});
