import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { createModelClient, ModelError } from "../../src/agent/model.js";
import { startModelServer, type ModelServer, type Script } from "../helpers/model-server.js";
import { renderUsage } from "../../src/github/plan-comment.js";

let server: ModelServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

async function failure(script: Script, maxRetries: number): Promise<string> {
  server = await startModelServer(script);
  const client = createModelClient({
    baseURL: server.url,
    apiKey: "sk-test-0000000000000000",
    model: "m",
    maxRetries,
    timeoutMs: 5_000,
  });
  const error = await client.complete([{ role: "user", content: "hi" }], []).catch((caught: unknown) => caught);
  expect(error).toBeInstanceOf(ModelError);
  return (error as ModelError).message;
}

describe("model endpoint failures, in words", () => {
  it("counts the attempts only when there were several", async () => {
    expect(await failure([{ status: 500 }], 0)).toMatch(/answered HTTP 500$/);
    const message = await failure([{ status: 503 }, { status: 503 }], 1);
    expect(message).toMatch(/answered HTTP 503 after 2 attempts$/);
    expect(server!.requests).toHaveLength(2);
  });

  it("does not claim retries for an answer that is never retried", async () => {
    expect(await failure([{ status: 400, body: { error: { message: "bad" } } }], 3)).toMatch(/answered HTTP 400$/);
    expect(server!.requests).toHaveLength(1);
  });

  it("names where each front end takes the key and the model", async () => {
    expect(await failure([{ status: 401 }], 0)).toMatch(
      /refused the API key \(HTTP 401\); check .*OPENAI_API_KEY.*openai-api-key.*--api-key/,
    );
    expect(
      await failure(
        [{ status: 404, body: { error: { message: "The model `m` does not exist", code: "model_not_found" } } }],
        0,
      ),
    ).toMatch(/does not know the model `m` .*BLUEPRINT_MODEL.*--model/);
  });
});

/** An endpoint that answers every chat request with one HTTP error, its body as given (JSON or plain text). */
async function refusingEndpoint(
  status: number,
  body: string,
  contentType = "application/json",
): Promise<{ root: string; paths: string[]; close(): Promise<void> }> {
  const paths: string[] = [];
  const endpoint = http.createServer((req, res) => {
    paths.push(req.url ?? "");
    req.resume();
    req.on("end", () => res.writeHead(status, { "content-type": contentType }).end(body));
  });
  await new Promise<void>((resolve) => endpoint.listen(0, "127.0.0.1", resolve));
  return {
    root: `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}`,
    paths,
    close: () => new Promise((resolve) => endpoint.close(() => resolve())),
  };
}

async function failureAt(baseURL: string, model = "qwen9-coder"): Promise<string> {
  const client = createModelClient({
    baseURL,
    apiKey: "sk-test-0000000000000000",
    model,
    maxRetries: 2,
    timeoutMs: 5_000,
  });
  const error = await client.complete([{ role: "user", content: "hi" }], []).catch((caught: unknown) => caught);
  expect(error).toBeInstanceOf(ModelError);
  return (error as ModelError).message;
}

describe("a 404 from the model endpoint", () => {
  const unknownModel = [
    [
      "OpenAI",
      404,
      {
        error: {
          message: "The model `qwen9-coder` does not exist or you do not have access to it.",
          type: "invalid_request_error",
          param: null,
          code: "model_not_found",
        },
      },
    ],
    [
      "Azure OpenAI",
      404,
      {
        error: {
          code: "DeploymentNotFound",
          message:
            "The API deployment for this resource does not exist. If you created the deployment within the last 5 minutes, please wait a moment and try again.",
        },
      },
    ],
    [
      "vLLM",
      404,
      {
        object: "error",
        message: "The model `qwen9-coder` does not exist.",
        type: "NotFoundError",
        param: null,
        code: 404,
      },
    ],
    [
      "Ollama",
      404,
      {
        error: {
          message: 'model "qwen9-coder" not found, try pulling it first',
          type: "api_error",
          param: null,
          code: null,
        },
      },
    ],
    [
      "LiteLLM (a 400)",
      400,
      {
        error: {
          message:
            "litellm.BadRequestError: Invalid model name passed in model=qwen9-coder. Call `/v1/models` to view available models for your key.",
          type: "invalid_request_error",
          param: "model",
          code: "400",
        },
      },
    ],
  ] as const;

  for (const [server, status, body] of unknownModel) {
    it(`says the model is unknown when the endpoint says so: ${server}`, async () => {
      const endpoint = await refusingEndpoint(status, JSON.stringify(body));
      try {
        const message = await failureAt(`${endpoint.root}/v1`);
        expect(message).toContain(
          `the model endpoint at ${endpoint.root}/v1 does not know the model \`qwen9-coder\` (HTTP ${status}: "`,
        );
        expect(message).toMatch(/check the model name \(`BLUEPRINT_MODEL`.*--model`\)$/);
        expect(message).not.toContain("nothing answers");
        // Neither is retried: asking again cannot make the model known.
        expect(endpoint.paths).toEqual(["/v1/chat/completions"]);
      } finally {
        await endpoint.close();
      }
    });
  }

  it("names the URL tried and suggests /v1 when the base URL has none and the server has no such path (Ollama's plain-text 404)", async () => {
    const endpoint = await refusingEndpoint(404, "404 page not found", "text/plain");
    try {
      const message = await failureAt(endpoint.root);
      expect(message).toBe(
        `nothing answers at ${endpoint.root}/chat/completions (HTTP 404: "404 page not found"): ${endpoint.root} does not look like an OpenAI-compatible API's base URL. ` +
          `It has no \`/v1\`: OpenAI-compatible servers usually answer under it, so try ${endpoint.root}/v1. ` +
          "Check the endpoint's base URL (`OPENAI_BASE_URL`; the Action's `openai-base-url` input; the CLI's `--base-url`)",
      );
    } finally {
      await endpoint.close();
    }
  });

  it("says the path is wrong, not the model, for a 404 that does not name the model (a base URL with a wrong prefix)", async () => {
    const endpoint = await refusingEndpoint(404, JSON.stringify({ detail: "Not Found" }));
    try {
      const message = await failureAt(`${endpoint.root}/api/v1`);
      expect(message).toContain(
        `nothing answers at ${endpoint.root}/api/v1/chat/completions (HTTP 404: "{"detail":"Not Found"}")`,
      );
      expect(message).toContain("Its path is probably wrong: the base URL is the part before `/chat/completions`.");
      expect(message).not.toContain("does not know the model");
    } finally {
      await endpoint.close();
    }
    const silent = await refusingEndpoint(404, "");
    try {
      expect(await failureAt(`${silent.root}/v1`)).toMatch(
        new RegExp(`^nothing answers at ${silent.root}/v1/chat/completions \\(HTTP 404\\):`),
      );
    } finally {
      await silent.close();
    }
  });
});

describe("renderUsage", () => {
  it("says when no model request was answered instead of counting zero requests", () => {
    expect(renderUsage({ prompt: 0, completion: 0, cached: 0, requests: 0 })).toBe(
      "0 prompt tokens (0 cached) + 0 completion tokens; no model request was answered",
    );
    expect(renderUsage({ prompt: 1200, completion: 30, cached: 1000, requests: 1 })).toBe(
      "1,200 prompt tokens (1,000 cached) + 30 completion tokens over 1 answered model request",
    );
  });
});
