// Prompt tokens of a 30-turn scripted planning session over a real repository (this one),
// with Blueprint's lean context versus sending the whole raw history every time.
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { encode } from "gpt-tokenizer";
import { runAgent } from "../lib/agent/loop.js";
import { PLAN_SYSTEM_PROMPT } from "../lib/agent/prompts.js";
import { createCommandRunner } from "../lib/workspace/command-runner.js";

const TURNS = 30;

/** The script: explore widely (reads, some re-reads, searches), then submit a plan on turn 30. */
function script(files) {
  const turns = [{ name: "list_files", arguments: { pattern: "*.ts" } }];
  for (let i = 0; turns.length < TURNS - 1; i++) {
    if (i % 7 === 6) turns.push({ name: "search", arguments: { pattern: "export (async )?function", path: "src" } });
    else if (i % 9 === 8)
      turns.push({ name: "read_file", arguments: { path: files[i % 5] } }); // a re-read
    else turns.push({ name: "read_file", arguments: { path: files[i % files.length] } });
  }
  turns.push({
    name: "submit_plan",
    arguments: {
      title: "Bench plan",
      summary: "A plan submitted by the benchmark.",
      steps: [{ id: "S1", title: "Do the thing", details: "", files: [], deps: [] }],
      risks: [],
      verification: [],
    },
  });
  return turns;
}

function tokensOf(messages) {
  let total = 0;
  for (const message of messages) {
    if (typeof message.content === "string") total += encode(message.content).length;
    for (const call of message.tool_calls ?? [])
      total += encode(`${call.function.name}${call.function.arguments}`).length;
    total += 4; // per-message framing, roughly as OpenAI counts it
  }
  return total;
}

function scriptedModel(turns, perRequest) {
  let n = 0;
  return {
    model: "bench",
    async complete(messages, tools) {
      const prompt = tokensOf(messages) + encode(JSON.stringify(tools)).length;
      perRequest.push(prompt);
      const call = turns[n++];
      return {
        message: {
          role: "assistant",
          content: null,
          refusal: null,
          tool_calls: [
            {
              id: `call_${n}`,
              type: "function",
              function: { name: call.name, arguments: JSON.stringify(call.arguments) },
            },
          ],
        },
        usage: { prompt, completion: 20, cached: 0 },
      };
    },
  };
}

async function session(root, turns, contextPolicy) {
  const perRequest = [];
  const outcome = await runAgent({
    model: scriptedModel(turns, perRequest),
    messages: [
      { role: "system", content: PLAN_SYSTEM_PROMPT },
      { role: "user", content: "Plan: add structured logging across the engine." },
    ],
    context: {
      root,
      mode: "plan",
      runner: createCommandRunner(),
      filesRead: new Set(),
      audit: [],
      allowWorkflowWrites: false,
    },
    limits: { maxIterations: TURNS + 5 },
    ...(contextPolicy === false ? { contextPolicy: false } : {}),
  });
  if (outcome.kind !== "plan_submitted") throw new Error(`the scripted session ended with ${outcome.kind}`);
  return perRequest;
}

export async function run() {
  const root = mkdtempSync(path.join(os.tmpdir(), "blueprint-bench-context-"));
  try {
    execFileSync("git", ["clone", "-q", "--depth", "1", `file://${process.cwd()}`, root]);
    const files = execFileSync("git", ["ls-files", "src/*.ts", "src/**/*.ts"], { cwd: root, encoding: "utf8" })
      .split("\n")
      .filter(Boolean)
      .sort();
    const turns = script(files);
    const naive = await session(root, turns, false);
    const lean = await session(root, turns);
    console.log(
      `${TURNS}-turn planning session over ${files.length} source files of this repository (prompt tokens per request, gpt-tokenizer):`,
    );
    console.log("  turn   naive     lean");
    naive.forEach((tokens, i) =>
      console.log(`  ${String(i + 1).padStart(4)} ${String(tokens).padStart(7)} ${String(lean[i]).padStart(8)}`),
    );
    const sum = (list) => list.reduce((a, b) => a + b, 0);
    const ratio = sum(lean) / sum(naive);
    console.log(`  total ${String(sum(naive)).padStart(7)} ${String(sum(lean)).padStart(8)}`);
    console.log(`  lean / naive = ${(ratio * 100).toFixed(1)} % (target ≤ 60 %: ${ratio <= 0.6 ? "met" : "NOT met"})`);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
