import { afterEach, describe, expect, it, vi } from "vitest";
import {
  createModelClient,
  ModelError,
  type ModelClientOptions,
  type ModelReply,
  type ModelRetry,
} from "../../src/agent/model.js";
import { assembleStream } from "../../src/agent/model-stream.js";
import { startModelServer, type ModelServer, type Script, type ScriptedReply } from "../helpers/model-server.js";

/**
 * Model requests are streamed: time limits watch the endpoint's silence, not the answer's length (issue #15, point 3).
 */

let server: ModelServer | null = null;
afterEach(async () => {
  vi.useRealTimers();
  await server?.close();
  server = null;
});

async function clientFor(script: Script, options: Partial<ModelClientOptions> = {}) {
  server = await startModelServer(script);
  const retries: ModelRetry[] = [];
  const client = createModelClient({
    baseURL: server.url,
    apiKey: "sk-test-0000000000000000",
    model: "m",
    maxRetries: 1,
    onRetry: (retry) => retries.push(retry),
    ...options,
  });
  return { client, retries, server };
}

/**
 * The time limits below run on vitest's fake clock, which only moves when a test moves it: what must come within a
 * limit always does, however slow this machine is, and what must break one breaks it exactly.
 */
const fakeClock = () => vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });

/**
 * A fetch that hands the client each server-sent event on its own, after the fake clock has moved `silences[n]` ms
 * for the client's attempt n: the silences within an answer are exactly these, not what the network makes them.
 */
function withSilences(silences: number[]): typeof fetch {
  let attempt = 0;
  return async (input, init) => {
    const silence = silences[attempt++] ?? 0;
    const response = await fetch(input, init);
    const reader = response.body?.getReader();
    if (!reader) return response;
    const decoder = new TextDecoder();
    let buffered = "";
    const pending: string[] = [];
    const body = new ReadableStream<Uint8Array>(
      {
        async pull(controller) {
          while (pending.length === 0) {
            const { done, value } = await reader.read();
            if (done && !buffered) return controller.close();
            buffered += done ? "" : decoder.decode(value, { stream: true });
            const events = buffered.split("\n\n");
            buffered = done ? "" : (events.pop() ?? "");
            pending.push(...events.filter(Boolean).map((event) => `${event}\n\n`));
          }
          vi.advanceTimersByTime(silence);
          controller.enqueue(new TextEncoder().encode(pending.shift()));
        },
        cancel: (reason) => reader.cancel(reason),
      },
      { highWaterMark: 0 },
    );
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}

/** Moves the fake clock (the SDK's back-off before a retry, say) in small steps until `done`, then leaves it. */
async function advanceUntil(done: () => boolean) {
  await expect
    .poll(() => {
      if (!done()) vi.advanceTimersByTime(50);
      return done();
    })
    .toBe(true);
}

const ask = (client: ReturnType<typeof createModelClient>, options = {}) =>
  client.complete([{ role: "user", content: "hi" }], [], options);

/** What the agent loop reads from a reply. */
const seen = (reply: ModelReply) => ({
  content: reply.message.content,
  toolCalls: reply.message.tool_calls ?? [],
  usage: reply.usage,
});

const answer: ScriptedReply = {
  content: "Reading the two files first.",
  toolCalls: [
    { name: "read_file", arguments: { path: "src/a.ts" }, id: "call_a" },
    {
      name: "read_file",
      arguments: { path: "src/b.ts", around: "export function parse(input: string)" },
      id: "call_b",
    },
  ],
  usage: { prompt: 1234, completion: 56, cached: 1000 },
  pieces: 4,
};

describe("streamed model requests", () => {
  it("asks for a stream with usage and assembles content, tool calls and usage as the whole answer has them", async () => {
    const { client, server } = await clientFor([answer, { ...answer, whole: true }]);
    const streamed = await ask(client);
    expect(server.requests[0]).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    expect(seen(streamed)).toEqual({
      content: "Reading the two files first.",
      toolCalls: [
        { id: "call_a", type: "function", function: { name: "read_file", arguments: '{"path":"src/a.ts"}' } },
        {
          id: "call_b",
          type: "function",
          function: {
            name: "read_file",
            arguments: '{"path":"src/b.ts","around":"export function parse(input: string)"}',
          },
        },
      ],
      usage: { prompt: 1234, completion: 56, cached: 1000 },
    });
    // The same reply answered whole (this endpoint then stops streaming) reads the same to the agent loop.
    expect(seen(await ask(client))).toEqual(seen(streamed));
    expect(streamed.message.role).toBe("assistant");
  });

  it("retries an endpoint that sends the headers but no first chunk within the limit", async () => {
    fakeClock();
    const { client, retries, server } = await clientFor([{ silentStream: true }, { content: "here" }], {
      timeoutMs: 60_000,
    });
    const reply = ask(client);
    // The limit is set before the request is sent: once the endpoint has it, the first attempt's time is up.
    await expect.poll(() => server.events).toContain("request 0");
    vi.advanceTimersByTime(60_000);
    // Then only the back-off before the retry; the second attempt has all the time it needs.
    await advanceUntil(() => server.requests.length === 2);
    expect((await reply).message.content).toBe("here");
    expect(server.events.slice(0, 2)).toEqual(["request 0", "closed 0"]);
    expect(
      retries.map(({ attempt, attempts, reason, timeoutMs }) => ({ attempt, attempts, reason, timeoutMs })),
    ).toEqual([{ attempt: 2, attempts: 2, reason: "did not answer within 60 s", timeoutMs: 60_000 }]);
  });

  it("says which limit an endpoint kept breaking when every attempt fails", async () => {
    const { client } = await clientFor([{ silentStream: true }, { silentStream: true }], { timeoutMs: 200 });
    const error = await ask(client).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ModelError);
    expect((error as ModelError).message).toBe(
      `the model endpoint at ${server?.url} did not answer in time: it did not answer within 0.2 s on the last of 2 attempts`,
    );
  });

  it("counts usage an endpoint reports oddly as whole, finite, non-negative tokens, for the hidden state to hold", async () => {
    const odd = { prompt: 1234.7, completion: -5, cached: 1e308 };
    const { client } = await clientFor([
      { content: "a", usage: odd },
      { content: "b", usage: { ...odd, prompt: "12" as unknown as number }, whole: true },
    ]);
    expect((await ask(client)).usage).toEqual({ prompt: 1234, completion: 0, cached: 1e12 });
    expect((await ask(client)).usage).toEqual({ prompt: 0, completion: 0, cached: 1e12 });
  });

  it("stops reading an answer that grows past its size limit instead of holding it all in memory", async () => {
    const { client, retries } = await clientFor(
      [
        { content: "x".repeat(200_000), pieces: 50 },
        { content: "x".repeat(200_000), pieces: 50 },
      ],
      { maxAnswerBytes: 50_000 },
    );
    const error = await ask(client).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ModelError);
    expect((error as ModelError).message).toContain("sent an answer of more than 50000 bytes");
    expect(retries.map((retry) => retry.reason)).toEqual(["sent an answer of more than 50000 bytes"]);
  });

  it("lets a slow but steady stream run longer than the limit, which now only bounds the silences", async () => {
    fakeClock();
    const { client, server } = await clientFor([{ content: "a long answer that keeps coming", pieces: 6 }], {
      timeoutMs: 300,
      fetch: withSilences([100]),
      // Without retries, a limit broken on the way fails the request at once (a retry would wait for the clock).
      maxRetries: 0,
    });
    // Ten chunks (role, six pieces, finish, usage, [DONE]) 100 ms apart: more than three times the limit in all.
    expect((await ask(client)).message.content).toBe("a long answer that keeps coming");
    expect(server.requests).toHaveLength(1);
  });

  it("retries an answer that goes quiet in the middle for longer than the idle limit", async () => {
    fakeClock();
    const { client, retries, server } = await clientFor([{ content: "stalls" }, { content: "flows" }], {
      timeoutMs: 2000,
      idleTimeoutMs: 200,
      fetch: withSilences([400, 0]),
    });
    const reply = ask(client);
    await advanceUntil(() => server.requests.length === 2);
    expect((await reply).message.content).toBe("flows");
    expect(retries.map((retry) => retry.reason)).toEqual(["went quiet for 0.2 s in the middle of an answer"]);
  });

  it("still ends a steady stream at the run's deadline, without a retry", async () => {
    fakeClock();
    const { client, retries, server } = await clientFor([{ content: "never finished in time", pieces: 10 }], {
      timeoutMs: 300,
      fetch: withSilences([100]),
    });
    // The run's signal, as AbortSignal.timeout(400) would end it, on the fake clock.
    const run = new AbortController();
    setTimeout(() => run.abort(new DOMException("The operation was aborted due to timeout", "TimeoutError")), 400);
    const error = await ask(client, { signal: run.signal, deadline: Date.now() + 400 }).catch(
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(Error);
    expect(error).not.toBeInstanceOf(ModelError);
    expect(retries).toEqual([]);
    expect(server.requests).toHaveLength(1);
  });

  it("falls back to whole answers for an endpoint that answers a stream request with plain JSON, and remembers it", async () => {
    const { client, server } = await clientFor([{ content: "whole", whole: true }, { content: "whole again" }]);
    expect((await ask(client)).message.content).toBe("whole");
    expect((await ask(client)).message.content).toBe("whole again");
    expect(server.requests.map((request) => request.stream ?? false)).toEqual([true, false]);
  });

  it("falls back to whole answers once for an endpoint that refuses streaming with a 400, without calling it a retry", async () => {
    const refusal: ScriptedReply = {
      status: 400,
      body: { error: { message: "stream_options: streaming is not supported by this server" } },
    };
    const { client, retries, server } = await clientFor([refusal, { content: "first" }, { content: "second" }]);
    expect((await ask(client)).message.content).toBe("first");
    expect((await ask(client)).message.content).toBe("second");
    expect(server.requests.map((request) => request.stream ?? false)).toEqual([true, false, false]);
    expect(retries).toEqual([]);
  });

  it("does not take any other 400 for a refusal to stream", async () => {
    const { client, server } = await clientFor([
      { status: 400, body: { error: { message: "messages: too long" } } },
      { content: "never asked" },
    ]);
    await expect(ask(client)).rejects.toThrow(/answered HTTP 400$/);
    expect(server.requests).toHaveLength(1);
  });
});

describe("assembleStream", () => {
  type Chunk = Parameters<typeof assembleStream>[0] extends AsyncIterable<infer C> ? C : never;
  const chunk = (delta: object | null, extra: object = {}): Chunk =>
    ({
      id: "c",
      object: "chat.completion.chunk",
      created: 0,
      model: "m",
      choices: delta ? [{ index: 0, delta, finish_reason: null }] : [],
      ...extra,
    }) as Chunk;
  async function* stream(chunks: Chunk[]) {
    yield* chunks;
  }

  it("keeps whole calls from servers that leave out the index, and takes usage from whichever chunk reports it", async () => {
    const answer = await assembleStream(
      stream([
        chunk({
          role: "assistant",
          tool_calls: [{ id: "x", type: "function", function: { name: "list_files", arguments: "{}" } }],
        }),
        chunk({ refusal: "I would rather " }),
        chunk({ refusal: "not." }, { usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 } }),
      ]),
    );
    expect(answer?.message).toEqual({
      role: "assistant",
      content: null,
      refusal: "I would rather not.",
      tool_calls: [{ id: "x", type: "function", function: { name: "list_files", arguments: "{}" } }],
    });
    expect(answer?.usage).toEqual({ prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 });
  });

  it("assembles calls with huge, negative or fractional indexes quickly, in index order, without dropping any", async () => {
    const call = (index: number, name: string) =>
      chunk({ tool_calls: [{ index, id: name, type: "function", function: { name, arguments: "{}" } }] });
    // A sparse array as long as the largest index took minutes to filter at 2^32 − 2, blocking the event loop
    // (timers, heartbeats, /cancel): the test's time limit, not a timed assertion, catches that.
    const answer = await assembleStream(
      stream([call(2 ** 32 - 2, "far"), call(-1, "negative"), call(0, "first"), call(1.5, "fraction")]),
    );
    expect(answer?.message.tool_calls?.map((toolCall) => toolCall.id)).toEqual([
      "first",
      "far",
      "negative",
      "fraction",
    ]);
  });

  it("is null for a stream that never carried the first choice", async () => {
    expect(
      await assembleStream(
        stream([chunk(null, { usage: { prompt_tokens: 1, completion_tokens: 0, total_tokens: 1 } })]),
      ),
    ).toBeNull();
  });
});
