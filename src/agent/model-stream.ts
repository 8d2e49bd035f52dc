import type OpenAI from "openai";

type Chunk = OpenAI.Chat.Completions.ChatCompletionChunk;
type ToolCall = OpenAI.Chat.Completions.ChatCompletionMessageFunctionToolCall;

export interface StreamedAnswer {
  message: OpenAI.Chat.Completions.ChatCompletionMessage;
  usage: OpenAI.CompletionUsage | null;
}

/**
 * A streamed answer put together as the endpoint would have sent it whole: the first choice's
 * content and refusal pieces joined, tool calls assembled from their deltas by index (id, name and
 * type from whichever chunk carries them, argument pieces joined), and the usage of the last chunk
 * that reports one (with `stream_options.include_usage`, a final chunk without choices). Null when
 * no chunk carried the first choice.
 */
export async function assembleStream(chunks: AsyncIterable<Chunk>): Promise<StreamedAnswer | null> {
  let content: string | null = null;
  let refusal: string | null = null;
  let answered = false;
  // By index, in a map: an index as large as a server likes must not make a sparse array of that length.
  const calls = new Map<number, ToolCall>();
  let usage: OpenAI.CompletionUsage | null = null;
  for await (const chunk of chunks) {
    if (chunk.usage) usage = chunk.usage;
    const delta = chunk.choices?.find((choice) => choice.index === 0)?.delta;
    if (!delta) continue;
    answered = true;
    if (delta.content) content = (content ?? "") + delta.content;
    if (delta.refusal) refusal = (refusal ?? "") + delta.refusal;
    for (const [position, piece] of (delta.tool_calls ?? []).entries()) {
      // Some servers leave out the index when each chunk carries whole calls.
      const index = typeof piece.index === "number" ? piece.index : position;
      const call = calls.get(index) ?? { id: "", type: "function", function: { name: "", arguments: "" } };
      calls.set(index, call);
      if (piece.id) call.id = piece.id;
      if (piece.function?.name) call.function.name = piece.function.name;
      if (piece.function?.arguments) call.function.arguments += piece.function.arguments;
    }
  }
  if (!answered) return null;
  // In index order; a sparse index (a server that skips one) leaves no hole in the list.
  const toolCalls = [...calls].sort(([a], [b]) => orderOf(a) - orderOf(b)).map(([, call]) => call);
  return {
    message: { role: "assistant", content, refusal, ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}) },
    usage,
  };
}

/** Where an index sorts: non-negative whole numbers first, by value; any other after them, in arrival order. */
function orderOf(index: number): number {
  return Number.isSafeInteger(index) && index >= 0 ? index : Number.MAX_SAFE_INTEGER;
}
