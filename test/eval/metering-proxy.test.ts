import { writeFileSync } from "node:fs";
import http from "node:http";
import path from "node:path";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { latestThreadState } from "../../eval/cli-driver.js";
import { startMeteringProxy, type MeteringProxy } from "../../eval/metering-proxy.js";
import { blueprint, assertCliBuilt } from "../cli/support.js";
import { gitIn, tempDir } from "../helpers/git-repo.js";
import { startModelServer } from "../helpers/model-server.js";
import { planReply, plan, step } from "./script.js";

interface Seen {
  url: string;
  authorization: string | undefined;
  body: string;
}

/** An endpoint that answers each request with the next reply: [status, content type, body]. */
async function upstream(
  replies: Array<[number, string, string, Record<string, string>?]>,
): Promise<{ url: string; seen: Seen[]; close(): Promise<void> }> {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")));
    req.on("end", () => {
      seen.push({ url: req.url ?? "", authorization: req.headers.authorization, body });
      const [status, type, text, headers] = replies[seen.length - 1] ?? [500, "text/plain", "no more replies"];
      res.writeHead(status, { ...headers, "content-type": type }).end(text);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1/`,
    seen,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

const usage = (prompt: number, completion: number, cached: number) => ({
  prompt_tokens: prompt,
  completion_tokens: completion,
  prompt_tokens_details: { cached_tokens: cached },
});

describe("the eval's metering proxy", () => {
  let proxy: MeteringProxy | null = null;
  afterEach(async () => {
    await proxy?.close();
    proxy = null;
  });

  it("passes requests through unchanged and adds up the usage each answer reports, per phase", async () => {
    const sse = [
      `data: ${JSON.stringify({ choices: [{ delta: { content: "hi" } }] })}`,
      `data: ${JSON.stringify({ choices: [], usage: usage(50, 5, 10) })}`,
      "data: [DONE]",
      "",
    ].join("\n\n");
    const endpoint = await upstream([
      [200, "application/json", JSON.stringify({ choices: [], usage: usage(100, 20, 30) })],
      [429, "application/json", JSON.stringify({ error: { message: "slow down" } })],
      [200, "text/event-stream", sse],
      [200, "application/json", JSON.stringify({ choices: [] })],
    ]);
    proxy = await startMeteringProxy(endpoint.url);
    const post = (body: string) =>
      fetch(`${proxy?.url}/chat/completions`, {
        method: "POST",
        headers: { authorization: "Bearer sk-test", "content-type": "application/json" },
        body,
      });

    proxy.setPhase("plan");
    const first = await post('{"model":"m"}');
    expect(first.status).toBe(200);
    expect(await first.json()).toEqual({ choices: [], usage: usage(100, 20, 30) });
    expect((await post("{}")).status).toBe(429);
    proxy.setPhase("build");
    expect(await (await post("{}")).text()).toBe(sse);
    await post("{}");

    expect(endpoint.seen[0]).toEqual({
      url: "/v1/chat/completions",
      authorization: "Bearer sk-test",
      body: '{"model":"m"}',
    });
    expect(proxy.usage("plan")).toEqual({ requests: 1, errors: 1, prompt: 100, cached: 30, completion: 20 });
    expect(proxy.usage("build")).toEqual({ requests: 2, errors: 0, prompt: 50, cached: 10, completion: 5 });
    expect(proxy.usage("revise")).toEqual({ requests: 0, errors: 0, prompt: 0, cached: 0, completion: 0 });
    await endpoint.close();
  });

  it("answers 502 with the reason, and counts a failed request, when the endpoint is down", async () => {
    proxy = await startMeteringProxy("http://127.0.0.1:9/v1");
    proxy.setPhase("plan");
    const answer = await fetch(`${proxy.url}/chat/completions`, { method: "POST", body: "{}" });
    expect(answer.status).toBe(502);
    expect(((await answer.json()) as { error: { message: string } }).error.message).toMatch(
      /^eval proxy: the model endpoint http:\/\/127\.0\.0\.1:9\/v1 did not answer/,
    );
    expect(proxy.usage("plan")).toMatchObject({ requests: 0, errors: 1 });
  });

  it("passes a 429 on with its status, body, Retry-After and other headers intact", async () => {
    const endpoint = await upstream([
      [
        429,
        "application/json",
        '{"error":{"message":"slow down"}}',
        { "retry-after": "7", "x-ratelimit-remaining-requests": "0" },
      ],
    ]);
    proxy = await startMeteringProxy(endpoint.url);
    proxy.setPhase("plan");
    const answer = await fetch(`${proxy.url}/chat/completions`, { method: "POST", body: "{}" });
    expect(answer.status).toBe(429);
    expect(answer.headers.get("retry-after")).toBe("7");
    expect(answer.headers.get("x-ratelimit-remaining-requests")).toBe("0");
    expect(await answer.text()).toBe('{"error":{"message":"slow down"}}');
    expect(proxy.usage("plan")).toMatchObject({ requests: 0, errors: 1 });
    await endpoint.close();
  });

  it("relays a slow stream chunk by chunk: a plan streamed in 8 chunks over 2 s with a 1 s silence limit works directly and through the proxy", async () => {
    assertCliBuilt();
    // Each chunk comes 250 ms after the last: never 1 s of silence, but 2 s for the whole answer, which a
    // proxy that reads whole answers before passing them on turns into 2 s of silence.
    const slowPlan = { ...planReply(plan([step("S1", ["index.js"])])), chunkDelayMs: 250, pieces: 4 };
    const model = await startModelServer([slowPlan, slowPlan]);
    const checkout = () => {
      const dir = tempDir("blueprint-eval-slow-");
      writeFileSync(path.join(dir, "index.js"), "module.exports = 1;\n");
      gitIn(dir, ["init", "-q", "-b", "main"]);
      gitIn(dir, ["add", "-A"]);
      gitIn(dir, ["commit", "-q", "-m", "start"]);
      return dir;
    };
    const env = { BLUEPRINT_MODEL_TIMEOUT_S: "1", OPENAI_API_KEY: "sk-test", BLUEPRINT_MODEL: "scripted" };
    try {
      const direct = checkout();
      const alone = await blueprint(["plan", "Make index.js export 2."], {
        cwd: direct,
        env: { ...env, OPENAI_BASE_URL: model.url },
      });
      expect(alone.code, alone.stderr).toBe(0);
      expect((await latestThreadState(direct))?.status).toBe("pending");

      proxy = await startMeteringProxy(model.url);
      proxy.setPhase("plan");
      const proxied = checkout();
      const through = await blueprint(["plan", "Make index.js export 2."], {
        cwd: proxied,
        env: { ...env, OPENAI_BASE_URL: proxy.url },
      });
      expect(through.code, through.stderr).toBe(0);
      expect((await latestThreadState(proxied))?.status).toBe("pending");
      expect(proxy.usage("plan")).toEqual({ requests: 1, errors: 0, prompt: 1_000, cached: 400, completion: 100 });
      expect(model.requests.every((request) => request.stream === true)).toBe(true);
    } finally {
      await model.close();
    }
  });
});
