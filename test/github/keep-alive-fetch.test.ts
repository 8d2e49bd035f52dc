import http from "node:http";
import type { AddressInfo } from "node:net";
import { Octokit } from "@octokit/rest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keepAliveFetch } from "../../src/github/keep-alive-fetch.js";

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  port: number;
}

/** A server that records what it was sent and answers by path. */
async function recordingServer(
  route: (seen: Seen, res: http.ServerResponse) => void,
): Promise<{ url: string; seen: Seen[]; close(): Promise<void> }> {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const entry = {
        method: req.method ?? "",
        url: req.url ?? "",
        headers: req.headers,
        body: Buffer.concat(chunks).toString(),
        port: req.socket.remotePort ?? 0,
      };
      seen.push(entry);
      route(entry, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

describe("keepAliveFetch", () => {
  let other: Awaited<ReturnType<typeof recordingServer>>;
  let api: Awaited<ReturnType<typeof recordingServer>>;
  const fetch = keepAliveFetch();

  beforeAll(async () => {
    other = await recordingServer((_seen, res) =>
      res.writeHead(200, { "content-type": "text/plain" }).end("elsewhere"),
    );
    api = await recordingServer((seen, res) => {
      const json = (status: number, body: unknown, headers: Record<string, string | string[]> = {}) =>
        res
          .writeHead(status, { "content-type": "application/json; charset=utf-8", ...headers })
          .end(JSON.stringify(body));
      if (seen.url === "/see-other") return res.writeHead(303, { location: "/echo" }).end();
      if (seen.url === "/temporary") return res.writeHead(307, { location: "/echo" }).end();
      if (seen.url === "/away") return res.writeHead(302, { location: `${other.url}/landing` }).end();
      if (seen.url === "/loop") return res.writeHead(302, { location: "/loop" }).end();
      if (seen.url.startsWith("/hop/"))
        return res.writeHead(302, { location: `/hop/${Number(seen.url.slice(5)) + 1}` }).end();
      // Never answered: only the caller's abort ends a request here, however slow the machine.
      if (seen.url === "/slow") return;
      if (seen.url.startsWith("/repos/o/r/issues/404"))
        return json(404, { message: "Not Found", documentation_url: "https://docs.github.com/rest" });
      json(
        seen.method === "POST" ? 201 : 200,
        { method: seen.method, body: seen.body },
        { "x-ratelimit-remaining": "4999", "set-cookie": ["a=1", "b=2"] },
      );
    });
  });
  afterAll(async () => {
    await api.close();
    await other.close();
  });

  it("answers with the status, the headers as fetch iterates them, and the body as text or JSON", async () => {
    const response = await fetch(`${api.url}/echo`, {
      method: "POST",
      body: '{"content":"eyes"}',
      headers: { "Content-Type": "application/json", Authorization: "token t" },
    });
    expect(response.status).toBe(201);
    expect(response.ok).toBe(true);
    expect(response.headers.get("X-RateLimit-Remaining")).toBe("4999");
    expect(Object.fromEntries(response.headers)).toMatchObject({
      "content-type": "application/json; charset=utf-8",
      "set-cookie": "a=1, b=2",
    });
    expect(await response.json()).toEqual({ method: "POST", body: '{"content":"eyes"}' });
    const sent = api.seen.at(-1);
    expect(sent?.headers).toMatchObject({
      "content-type": "application/json",
      authorization: "token t",
      "content-length": "18",
    });
  });

  it("sends one request after another over the same connection", async () => {
    // undici hands an idle socket out again one event-loop turn after its answer (GHSA-35p6-xmwp-9g52: a
    // server's late close is seen first); a request in the same turn takes the pool's next connection.
    await new Promise(setImmediate);
    await (await fetch(`${api.url}/echo`)).text();
    await new Promise(setImmediate);
    await (await fetch(`${api.url}/echo`)).text();
    const [first, second] = api.seen.slice(-2);
    expect(second?.port).toBe(first?.port);
    for (let i = 0; i < 6; i++) await (await fetch(`${api.url}/echo`)).text();
    expect(new Set(api.seen.slice(-6).map((seen) => seen.port)).size).toBeLessThanOrEqual(2);
  });

  it("follows redirects as fetch does: a 303 becomes a GET without its body, a 307 keeps both, and another origin gets no credentials", async () => {
    const seeOther = await fetch(`${api.url}/see-other`, {
      method: "POST",
      body: "data",
      headers: { authorization: "token t" },
    });
    expect(await seeOther.json()).toEqual({ method: "GET", body: "" });
    expect(seeOther.redirected).toBe(true);
    expect(seeOther.url).toBe(`${api.url}/echo`);
    const temporary = await fetch(`${api.url}/temporary`, { method: "PUT", body: "data" });
    expect(await temporary.json()).toEqual({ method: "PUT", body: "data" });
    const away = await fetch(`${api.url}/away`, { headers: { authorization: "token secret" } });
    expect(await away.text()).toBe("elsewhere");
    expect(other.seen.at(-1)?.headers.authorization).toBeUndefined();
    await expect(fetch(`${api.url}/loop`)).rejects.toThrow(TypeError);
    await expect(fetch(`${api.url}/hop/0`)).rejects.toMatchObject({
      name: "TypeError",
      cause: { message: "redirect count exceeded" },
    });
    expect(api.seen.filter((seen) => seen.url.startsWith("/hop/"))).toHaveLength(21);
  });

  it("fails as fetch fails: an abort as an AbortError, a refused connection as 'fetch failed' with its cause", async () => {
    const controller = new AbortController();
    const aborted = fetch(`${api.url}/slow`, { signal: controller.signal });
    setTimeout(() => controller.abort(), 50);
    await expect(aborted).rejects.toMatchObject({ name: "AbortError" });
    await expect(fetch(`${api.url}/slow`, { signal: AbortSignal.timeout(50) })).rejects.toMatchObject({
      name: "TimeoutError",
    });
    const closed = await recordingServer(() => undefined);
    const gone = closed.url;
    await closed.close();
    await expect(fetch(`${gone}/echo`)).rejects.toMatchObject({
      name: "TypeError",
      message: "fetch failed",
      cause: { code: "ECONNREFUSED" },
    });
  });

  it("serves Octokit: its data, and GitHub's error message and status", async () => {
    const octokit = new Octokit({ baseUrl: api.url, request: { fetch } });
    const { data } = await octokit.rest.issues.createComment({ owner: "o", repo: "r", issue_number: 1, body: "hi" });
    expect(data).toMatchObject({ method: "POST", body: '{"body":"hi"}' });
    await expect(octokit.rest.issues.get({ owner: "o", repo: "r", issue_number: 404 })).rejects.toMatchObject({
      status: 404,
      message: expect.stringContaining("Not Found"),
    });
  });
});
