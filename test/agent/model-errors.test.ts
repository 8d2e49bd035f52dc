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
  const client = createModelClient({ baseURL: server.url, apiKey: "sk-test-0000000000000000", model: "m", maxRetries, timeoutMs: 5_000 });
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
    expect(await failure([{ status: 401 }], 0)).toMatch(/refused the API key \(HTTP 401\); check .*OPENAI_API_KEY.*openai-api-key.*--api-key/);
    expect(await failure([{ status: 404 }], 0)).toMatch(/does not know the model .*BLUEPRINT_MODEL.*--model/);
  });
});

describe("renderUsage", () => {
  it("says when no model request was answered instead of counting zero requests", () => {
    expect(renderUsage({ prompt: 0, completion: 0, cached: 0, requests: 0 })).toBe("0 prompt tokens (0 cached) + 0 completion tokens; no model request was answered");
    expect(renderUsage({ prompt: 1200, completion: 30, cached: 1000, requests: 1 })).toBe("1,200 prompt tokens (1,000 cached) + 30 completion tokens over 1 answered model request");
  });
});
