import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parse } from "yaml";
import type { GitHubDouble } from "../double/github-server.js";
import type { WebhookEvent } from "../double/webhooks.js";
import { PROJECT_ROOT } from "./app-process.js";
import { runNode } from "./node-process.js";

export const ACTION_BUNDLE = path.join(PROJECT_ROOT, "dist", "index.js");
const ACTION_YML = path.join(PROJECT_ROOT, "action.yml");

export interface ActionStep {
  code: number | null;
  /** What the step printed: log lines and workflow commands (`::error::`, `::add-mask::`). */
  stdout: string;
  stderr: string;
  /** The step's outputs, read back from its GITHUB_OUTPUT file. */
  outputs: Record<string, string>;
  /** The job summary it appended to GITHUB_STEP_SUMMARY. */
  summary: string;
  /** The job's directory: RUNNER_TEMP (with the event file) and GITHUB_WORKSPACE are inside. */
  dir: string;
}

export interface ActionsRunner {
  /** One job with one step, `uses: ./` with `with:` inputs, started by `event`. */
  run(
    event: WebhookEvent,
    options?: { inputs?: Record<string, string>; env?: Record<string, string> },
  ): Promise<ActionStep>;
  /** Every job directory made so far (for checks on what was left on disk). */
  jobDirs: string[];
  /** Removes every job directory. */
  cleanup(): void;
}

/**
 * A GitHub Actions runner in miniature: for each job it writes the event file and the step's
 * command files, sets the variables a runner sets (pointed at the double), turns `with:` and the
 * defaults in action.yml into `INPUT_*` variables, and starts `node dist/index.js` as
 * `runs.using: node24` does. A fresh job directory each time, as each workflow run gets.
 */
export function createActionsRunner(options: {
  github: GitHubDouble;
  token: string;
  inputs?: Record<string, string>;
  env?: Record<string, string>;
}): ActionsRunner {
  const { github, token } = options;
  const jobDirs: string[] = [];
  const declared = (parse(readFileSync(ACTION_YML, "utf8")) as { inputs: Record<string, { default?: string }> }).inputs;
  let run = 0;

  return {
    jobDirs,
    cleanup: () => jobDirs.splice(0).forEach((dir) => rmSync(dir, { recursive: true, force: true })),
    async run(event, step = {}) {
      run += 1;
      const dir = mkdtempSync(path.join(os.tmpdir(), "blueprint-e2e-runner-"));
      jobDirs.push(dir);
      const temp = path.join(dir, "_temp");
      const workspace = path.join(dir, "work", github.repository.name);
      const home = path.join(dir, "home");
      const commands = path.join(temp, "_runner_file_commands");
      for (const made of [path.join(temp, "_github_workflow"), workspace, home, commands])
        mkdirSync(made, { recursive: true });
      const eventPath = path.join(temp, "_github_workflow", "event.json");
      writeFileSync(eventPath, JSON.stringify(event.payload, null, 2));
      const file = (name: string) => {
        const at = path.join(commands, `${name}_${run}`);
        writeFileSync(at, "");
        return at;
      };
      const outputPath = file("set_output");
      const summaryPath = file("step_summary");

      // `with:` over action.yml's defaults; `${{ github.token }}` is the job's token.
      const given = { ...options.inputs, ...step.inputs };
      const inputs = Object.fromEntries(
        Object.entries(declared).map(([name, input]) => [
          `INPUT_${name.replace(/ /g, "_").toUpperCase()}`,
          given[name] ?? (input.default === "${{ github.token }}" ? token : String(input.default ?? "")),
        ]),
      );
      const fullName = `${github.repository.owner}/${github.repository.name}`;
      const env: Record<string, string> = {
        PATH: process.env.PATH ?? "/usr/bin:/bin",
        HOME: home,
        CI: "true",
        GITHUB_ACTIONS: "true",
        GITHUB_EVENT_NAME: event.name,
        GITHUB_EVENT_PATH: eventPath,
        GITHUB_REPOSITORY: fullName,
        GITHUB_REPOSITORY_OWNER: github.repository.owner,
        GITHUB_SERVER_URL: github.url,
        GITHUB_API_URL: github.apiUrl,
        GITHUB_GRAPHQL_URL: `${github.url}/api/graphql`,
        GITHUB_WORKSPACE: workspace,
        GITHUB_RUN_ID: String(9000 + run),
        GITHUB_RUN_NUMBER: String(run),
        GITHUB_RUN_ATTEMPT: "1",
        GITHUB_WORKFLOW: "Blueprint",
        GITHUB_JOB: "blueprint",
        GITHUB_ACTION: "__self",
        GITHUB_ACTOR: String((event.payload.sender as { login?: unknown } | undefined)?.login ?? "octocat"),
        GITHUB_REF: `refs/heads/${github.repository.defaultBranch}`,
        GITHUB_SHA: github.repository.head(github.repository.defaultBranch) ?? "",
        GITHUB_OUTPUT: outputPath,
        GITHUB_STEP_SUMMARY: summaryPath,
        GITHUB_ENV: file("set_env"),
        GITHUB_PATH: file("add_path"),
        GITHUB_STATE: file("save_state"),
        RUNNER_OS: "Linux",
        RUNNER_ARCH: "X64",
        RUNNER_TEMP: temp,
        RUNNER_TOOL_CACHE: path.join(dir, "_tool"),
        // The double has no rate limits: GitHub's second between writes would only make the run slow.
        BLUEPRINT_GITHUB_WRITE_GAP_MS: "0",
        ...options.env,
        ...step.env,
        ...inputs,
      };
      const result = await runNode([ACTION_BUNDLE], { cwd: workspace, env });
      return {
        code: result.code,
        stdout: result.stdout,
        stderr: result.stderr,
        outputs: parseOutputFile(readFileSync(outputPath, "utf8")),
        summary: readFileSync(summaryPath, "utf8"),
        dir,
      };
    },
  };
}

/** `name<<DELIMITER\nvalue\nDELIMITER` entries, as @actions/core writes them to GITHUB_OUTPUT. */
export function parseOutputFile(text: string): Record<string, string> {
  const outputs: Record<string, string> = {};
  for (const match of text.matchAll(/^([^\n<]+)<<(\S+)\n([\s\S]*?)\n\2$/gm)) outputs[match[1] ?? ""] = match[3] ?? "";
  return outputs;
}
