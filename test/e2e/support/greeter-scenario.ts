import type { ModelRequest, ScriptedReply } from "../../helpers/model-server.js";

/**
 * The work every end-to-end walk asks for — "greet people by name" on a tiny repository — and
 * the scripted model's side of it, so the App, the Action and the CLI are driven the same way.
 */

export const FILES = {
  "README.md": "# greeter\n\nPrints a greeting.\n",
  "package.json": '{ "name": "greeter", "version": "1.0.0", "type": "module" }\n',
  "src/index.js": 'console.log("Hello, world!");\n',
};
export const GREET_JS = "export function greet(name) {\n  return `Hello, ${name}!`;\n}\n";
export const INDEX_JS = 'import { greet } from "./greet.js";\n\nconsole.log(greet(process.argv[2] ?? "world"));\n';

export const PLAN = {
  title: "Greet people by name",
  summary: "Add a `greet` helper and use it in the entry point, so `node src/index.js Ada` greets Ada.",
  steps: [
    {
      id: "S1",
      title: "Add a greet helper",
      details: "Create `src/greet.js` exporting `greet(name)`.",
      files: ["src/greet.js"],
      deps: [],
      risk: null,
      complexity: "low",
    },
    {
      id: "S2",
      title: "Greet by name in the entry point",
      details: "Use `greet` in `src/index.js` with the first argument.",
      files: ["src/index.js"],
      deps: ["S1"],
      risk: null,
      complexity: "low",
    },
  ],
  risks: ["None beyond a changed greeting"],
  verification: ["test -f src/greet.js"],
};

/** The commit subjects a build of PLAN leaves on its branch, newest first. */
export const STEP_COMMITS = ["S2: Greet by name in the entry point", "S1: Add a greet helper"];

const call = (name: string, args: unknown): ScriptedReply => ({ toolCalls: [{ name, arguments: args }] });
const SUBMIT_PLAN = call("submit_plan", PLAN);
/** Planning explores, then submits; each step writes, then completes. */
const PLANNING = [
  call("list_files", { path: null, pattern: null }),
  call("read_file", { path: "src/index.js", start_line: null, end_line: null }),
  SUBMIT_PLAN,
];
const STEPS: Record<string, ScriptedReply[]> = {
  S1: [
    call("write_file", { path: "src/greet.js", content: GREET_JS }),
    call("complete_step", { step_id: "S1", summary: "Added src/greet.js with greet(name)." }),
  ],
  S2: [
    call("edit_file", {
      path: "src/index.js",
      old_string: 'console.log("Hello, world!");\n',
      new_string: INDEX_JS,
      replace_all: null,
    }),
    call("complete_step", { step_id: "S2", summary: "The entry point greets its first argument." }),
  ],
};

/** The read-only diagnosis of a failing lint check: one fix-up step. */
export const DIAGNOSIS_STEP = "Remove the unused variable";
const DIAGNOSIS = call("submit_plan", {
  ...PLAN,
  title: "An unused variable",
  summary: "`src/greet.js` declares `x` and never uses it, which the lint check refuses.",
  steps: [{ ...PLAN.steps[0], id: "S1", title: DIAGNOSIS_STEP, files: ["src/greet.js"], deps: [] }],
  verification: [],
});
const isDiagnosis = (request: ModelRequest) =>
  String(request.messages.find((m) => m.role === "user")?.content ?? "").startsWith("# Failing checks on pull request");

/** The step a build conversation is about (`Step S2: …` opens it); undefined for planning. */
export const stepOf = (request: ModelRequest) =>
  /^Step (S\d+):/.exec(String(request.messages.find((m) => m.role === "user")?.content ?? ""))?.[1];

/** The model's reply by conversation and turn, so it does not matter how many conversations came before. */
export function greeterModelReply(request: ModelRequest): ScriptedReply {
  const turn = request.messages.filter((message) => message.role === "assistant").length;
  if (isDiagnosis(request)) return DIAGNOSIS;
  if (request.tools?.some((tool) => tool.function.name === "submit_plan")) return PLANNING[turn] ?? SUBMIT_PLAN;
  return (
    STEPS[stepOf(request) ?? ""]?.[turn] ?? {
      status: 500,
      body: { error: { message: `no scripted reply for ${stepOf(request)} turn ${turn}` } },
    }
  );
}

/** A script for startModelServer that answers every request with greeterModelReply. */
export const greeterScript = (requests = 40) => Array.from({ length: requests }, () => greeterModelReply);
