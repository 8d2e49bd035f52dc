import { createPublicKey, createVerify, generateKeyPairSync } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AppJwt, appTokenMinter } from "../../src/github/app-jwt.js";
import { startGitHubDouble, type GitHubDouble } from "../e2e/double/github-server.js";

const quiet = { info: () => {}, warn: () => {}, error: () => {}, debug: () => {}, child: () => quiet } as never;

describe("the App's token (JWT)", () => {
  const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const pem = privateKey.export({ type: "pkcs1", format: "pem" }).toString();
  const claims = (token: string) => JSON.parse(Buffer.from(token.split(".")[1] ?? "", "base64url").toString()) as { iat: number; exp: number; iss: number };

  it("is an RS256 token for the App, issued a minute early and good for nine minutes", () => {
    const now = Date.parse("2026-11-23T12:00:00Z");
    const token = new AppJwt(42, pem).token(now);
    const [header, payload, signature] = token.split(".");
    expect(JSON.parse(Buffer.from(header ?? "", "base64url").toString())).toEqual({ alg: "RS256", typ: "JWT" });
    expect(claims(token)).toEqual({ iat: now / 1000 - 60, exp: now / 1000 - 60 + 540, iss: 42 });
    expect(createVerify("RSA-SHA256").update(`${header}.${payload}`).verify(createPublicKey(publicKey.export({ type: "spki", format: "pem" })), signature ?? "", "base64url")).toBe(true);
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
    github = await startGitHubDouble({ files: { "README.md": "hi\n" }, issues: [{ title: "t", body: "b", author: "octocat" }], permissions: { maintainer: "write" } });
  });
  afterAll(async () => github?.stop());

  it("are granted by GitHub (the double checks the App's signature), narrowed to one repository", async () => {
    const mint = appTokenMinter({ appId: github.appId, privateKey: github.privateKey ?? "", baseUrl: github.apiUrl, log: quiet });
    const installationId = github.installationIds[0] ?? 0;
    const minter = await mint(installationId);
    expect(await mint(installationId)).toBe(minter);
    const { data } = await minter.rest.apps.createInstallationAccessToken({ installation_id: installationId, repositories: ["hello-world"], permissions: { contents: "read" } });
    expect(data.token).toMatch(/^ghs_/);
    const grants = github.requests.filter((request) => request.path === `/app/installations/${installationId}/access_tokens`);
    expect(grants.map((request) => [request.status, request.auth])).toEqual([[201, "app-jwt"]]);
  });

  it("are refused when signed with another key", async () => {
    const stranger = generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey.export({ type: "pkcs1", format: "pem" }).toString();
    const minter = await appTokenMinter({ appId: github.appId, privateKey: stranger, baseUrl: github.apiUrl, log: quiet })(github.installationIds[0] ?? 0);
    await expect(minter.rest.apps.createInstallationAccessToken({ installation_id: github.installationIds[0] ?? 0, repositories: ["hello-world"] })).rejects.toMatchObject({ status: 401 });
  });
});
