import { mkdtempSync, rmSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { chartSvg, renderChart } from "../../eval/chart-svg.js";
import { main } from "../../eval/main.js";
import { preflight } from "../../eval/preflight.js";
import { writeJsonAtomic } from "../../eval/results-store.js";
import { harnessFailure, type TaskRun } from "../../eval/run-task.js";
import { summarise, type EvalReport } from "../../eval/runner.js";
import { passAtK } from "../../eval/scoring.js";
import { closedPort } from "./support.js";

const dirs: string[] = [];
const scratch = () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), "blueprint-eval-report-"));
  dirs.push(dir);
  return dir;
};
afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

/** An endpoint answering every request with one status and body; records what it was asked. */
async function endpoint(
  status: number,
  body: unknown,
  routes: (url: string, method: string) => boolean = () => true,
): Promise<{ url: string; seen: string[]; close(): Promise<void> }> {
  const seen: string[] = [];
  const server = http.createServer((req, res) => {
    seen.push(`${req.method} ${req.url} ${req.headers.authorization ?? "-"}`);
    req.resume();
    if (!routes(req.url ?? "", req.method ?? "")) res.writeHead(404).end("Not Found");
    else res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    seen,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

describe("the eval's preflight", () => {
  it("says in words what is wrong: refused connection, rejected key, no API at the URL, no key for OpenAI", async () => {
    const port = await closedPort();
    expect(await preflight(`http://127.0.0.1:${port}/v1`, "sk-test", undefined)).toEqual({
      ok: false,
      problem: `connection refused at http://127.0.0.1:${port}/v1: is the server running, on that port?`,
    });

    const rejecting = await endpoint(401, { error: { message: "Incorrect API key provided" } });
    const refused = await preflight(rejecting.url, "sk-wrong", "gpt-x");
    expect(refused).toEqual({
      ok: false,
      problem: `401: key rejected by ${rejecting.url} — it said: {"error":{"message":"Incorrect API key provided"}}`,
    });
    expect(rejecting.seen).toEqual(["GET /v1/models Bearer sk-wrong"]);
    await rejecting.close();

    const nothing = await endpoint(200, {}, () => false);
    expect(await preflight(nothing.url.replace(/\/v1$/, ""), "sk-test", "m")).toEqual({
      ok: false,
      problem: `404: no OpenAI-compatible API at ${nothing.url.replace(/\/v1$/, "")} (missing /v1?) — it said: Not Found`,
    });
    // No model list: a one-token chat completion decided it.
    expect(nothing.seen).toEqual(["GET /models Bearer sk-test", "POST /chat/completions Bearer sk-test"]);
    await nothing.close();

    // A chat API without a model list that does not serve the model: the model is named, not the URL.
    const unknownModel = await endpoint(
      404,
      { object: "error", message: "The model `m` does not exist.", type: "NotFoundError", code: 404 },
      (url) => url.endsWith("/chat/completions"),
    );
    expect(await preflight(unknownModel.url, "sk-test", "m")).toEqual({
      ok: false,
      problem: `404: ${unknownModel.url} does not know the model "m": check --model — it said: {"object":"error","message":"The model \`m\` does not exist.","type":"NotFoundError","code":404}`,
    });
    await unknownModel.close();

    expect(await preflight("https://api.openai.com/v1", undefined, undefined)).toEqual({
      ok: false,
      problem: "no API key for https://api.openai.com/v1: set OPENAI_API_KEY or give --api-key.",
    });
  });

  it("passes a working endpoint, noting a model it does not list, and one without a model list whose chat API answers", async () => {
    const listing = await endpoint(200, { object: "list", data: [{ id: "qwen2.5-coder:14b" }, { id: "llama3" }] });
    expect(await preflight(listing.url, undefined, "qwen2.5-coder:14b")).toEqual({ ok: true, note: null });
    expect(await preflight(listing.url, undefined, "gpt-4.1")).toEqual({
      ok: true,
      note: `${listing.url} does not list the model "gpt-4.1" (it lists qwen2.5-coder:14b, llama3)`,
    });
    await listing.close();

    const chatOnly = await endpoint(200, { choices: [] }, (url) => url.endsWith("/chat/completions"));
    expect(await preflight(chatOnly.url, "sk-test", "m")).toEqual({ ok: true, note: null });
    await chatOnly.close();
  });
});

const PRICE = 0.01;
function fakeRun(
  task: string,
  run: number,
  passed: boolean,
  tokens: number,
  seconds: number,
  cost: number | null = tokens * PRICE,
): TaskRun {
  const base = harnessFailure({ id: task, kind: "smoke" }, run, "unused");
  const usage = { requests: 2, errors: 0, prompt: tokens - 10, cached: 0, completion: 10 };
  return {
    ...base,
    error: null,
    check: { ...base.check, ran: true, passed },
    usage: { plan: usage, revise: base.usage.revise, build: base.usage.build, total: usage },
    cost,
    seconds: { ...base.seconds, total: seconds },
  };
}

function fakeReport(runs: TaskRun[], model: string): EvalReport {
  const tasks = [...new Set(runs.map((run) => run.task))];
  return {
    startedAt: "2026-11-26T00:00:00.000Z",
    suite: "smoke",
    endpoint: "http://127.0.0.1/v1",
    model,
    feedback: null,
    runsPerTask: 1,
    taskTimeoutS: 60,
    tasks: tasks.map((task) => ({
      task,
      kind: "smoke",
      summary: summarise(runs.filter((run) => run.task === task)),
      passAt1: null,
      passAtN: null,
    })),
    overall: summarise(runs),
    passAt: { k1: null, kN: null },
    validation: {},
    unscored: [],
    runs,
  };
}

describe("eval reports side by side, pass@k, and the chart", () => {
  it("compare prints success, cost, tokens and time per task and in total, a task missing on one side as –", async () => {
    const dir = scratch();
    const a = path.join(dir, "a.json");
    const b = path.join(dir, "b.json");
    writeJsonAtomic(
      a,
      fakeReport(
        [
          fakeRun("ms-2.1.2", 1, true, 100, 2.5),
          fakeRun("ms-2.1.2", 2, false, 300, 3),
          fakeRun("fresh-0.5.2", 1, false, 50, 1),
        ],
        "small",
      ),
    );
    writeJsonAtomic(
      b,
      fakeReport(
        [fakeRun("ms-2.1.2", 1, true, 1_000, 10, null), fakeRun("bytes-3.1.1", 1, true, 2_000, 20, null)],
        "large",
      ),
    );
    const lines: string[] = [];
    const { exitCode } = await main(["compare", a, b], {}, { stdout: (text) => lines.push(text), stderr: () => {} });
    expect(exitCode).toBe(0);
    const text = lines.join("\n");
    expect(text).toContain(
      "| task | success A | success B | cost A ($) | cost B ($) | tokens A | tokens B | time A (s) | time B (s) |",
    );
    expect(text).toContain("| ms-2.1.2 | 1/2 | 1/1 | 4.0000 | – | 400 | 1,000 | 5.5 | 10.0 |");
    expect(text).toContain("| fresh-0.5.2 | 0/1 | – | 0.5000 | – | 50 | – | 1.0 | – |");
    expect(text).toContain("| bytes-3.1.1 | – | 1/1 | – | – | – | 2,000 | – | 20.0 |");
    expect(text).toContain("| **total** | 1/3 | 2/2 | 4.5000 | – | 450 | 3,000 | 6.5 | 30.0 |");
    const errors: string[] = [];
    expect((await main(["compare", a], {}, { stdout: () => {}, stderr: (line) => errors.push(line) })).exitCode).toBe(
      2,
    );
    expect(
      (
        await main(
          ["compare", a, path.join(dir, "missing.json")],
          {},
          { stdout: () => {}, stderr: (line) => errors.push(line) },
        )
      ).exitCode,
    ).toBe(2);
    expect(errors.join("\n")).toMatch(/compare takes two report files[\s\S]*missing\.json: ENOENT/);
  });

  it("computes pass@k with the unbiased estimator: 1 − C(n−c, k)/C(n, k)", () => {
    const binomial = (n: number, k: number): number =>
      k < 0 || k > n ? 0 : k === 0 ? 1 : (binomial(n - 1, k - 1) * n) / k;
    for (const [n, c, k] of [
      [5, 2, 1],
      [5, 2, 2],
      [5, 2, 5],
      [10, 3, 4],
      [4, 0, 2],
      [4, 4, 1],
      [1, 1, 1],
      [1, 0, 1],
    ] as const) {
      expect(passAtK(n, c, k)).toBeCloseTo(1 - binomial(n - c, k) / binomial(n, k), 12);
    }
    expect(passAtK(5, 2, 1)).toBeCloseTo(0.4, 12);
    expect(passAtK(5, 2, 5)).toBe(1);
    expect(passAtK(3, 0, 3)).toBe(0);
    expect(() => passAtK(3, 1, 4)).toThrow(/1 ≤ k ≤ n/);
  });

  it("draws well-formed SVG with one mark per task, at its cost and success, names escaped", () => {
    const report = fakeReport(
      [
        fakeRun("ms-2.1.2", 1, true, 100, 1),
        fakeRun("fresh-0.5.2", 1, false, 400, 1),
        fakeRun("a<b&c", 1, true, 200, 1),
      ],
      "m",
    );
    const svg = renderChart(report);
    expect(wellFormed(svg)).toBe(true);
    expect(svg.match(/<circle /g)).toHaveLength(3);
    expect(svg).toContain("<title>a&lt;b&amp;c: 100% passed, 2</title>");
    // x runs from 0 to $5 (the next round figure above $4) over 620 px from x = 70; y = 100% at the top (50), 0% at the
    // bottom (360).
    expect(svg).toContain('<circle cx="194" cy="50"');
    expect(svg).toContain('<circle cx="566" cy="360"');
    expect(svg).toContain("mean cost per run ($)");
    const unpriced = renderChart(fakeReport([fakeRun("ms-2.1.2", 1, true, 100, 1, null)], "m"));
    expect(unpriced).toContain("mean tokens per run");
    expect(wellFormed(chartSvg([], "x", "empty"))).toBe(true);
  });
});

/** Every tag closes in order, attributes are quoted, and no bare & or < is left in text. */
function wellFormed(xml: string): boolean {
  const stack: string[] = [];
  const tags = /<(\/?)([a-zA-Z][\w:-]*)((?:\s+[\w:-]+="[^"<]*")*)\s*(\/?)>/g;
  let at = 0;
  for (const match of xml.matchAll(tags)) {
    const text = xml.slice(at, match.index);
    if (/[<>]|&(?!(amp|lt|gt|quot|apos);)/.test(text)) return false;
    at = (match.index ?? 0) + match[0].length;
    const [, closing, name = "", , selfClosing] = match;
    if (selfClosing) continue;
    if (!closing) stack.push(name);
    else if (stack.pop() !== name) return false;
  }
  return stack.length === 0 && xml.slice(at).trim() === "" && xml.trimStart().startsWith("<svg");
}
