import { symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createModelClient } from "../../src/agent/model.js";
import { DEFAULT_REPO_CONFIG } from "../../src/config/repo-config.js";
import { planSchema } from "../../src/plan/schema.js";
import { diffForModel } from "../../src/workflow/build/diff-for-model.js";
import { fillPullRequestTemplate, findPullRequestTemplate } from "../../src/workflow/build/pr-template.js";
import {
  lostHeadings,
  templateHeadings,
  untickNewCheckboxes,
  withTextUnderFirstHeading,
} from "../../src/workflow/build/template-sections.js";
import { RepoCache } from "../../src/workspace/repo-cache.js";
import type { Workspace } from "../../src/workspace/workspace.js";
import { createBareRepo, gitIn, tempDir, type BareRepo } from "../helpers/git-repo.js";
import { samplePlan, startModelServer, type ScriptedReply } from "../helpers/model-server.js";

const open: Workspace[] = [];
afterEach(async () => {
  for (const workspace of open.splice(0)) await workspace.dispose().catch(() => undefined);
});

async function checkout(repo: BareRepo): Promise<Workspace> {
  const workspace = await new RepoCache(tempDir("blueprint-cache-")).prepare({
    cloneUrl: repo.url,
    ref: "refs/heads/main",
  });
  open.push(workspace);
  return workspace;
}

describe("findPullRequestTemplate", () => {
  it("reads the template GitHub would use: any case, .github/ before the root before docs/", async () => {
    const repo = createBareRepo({
      "README.md": "# x\n",
      "docs/Pull_Request_Template.md": "## From docs\n",
      "PULL_REQUEST_TEMPLATE.md": "## From the root\n",
    });
    expect(await findPullRequestTemplate(await checkout(repo))).toEqual({
      path: "PULL_REQUEST_TEMPLATE.md",
      text: "## From the root\n",
    });

    repo.commit({ ".github/pull_request_template.md": "## From .github\n" }, "add a .github template");
    expect(await findPullRequestTemplate(await checkout(repo))).toEqual({
      path: ".github/pull_request_template.md",
      text: "## From .github\n",
    });
  });

  it("skips the PULL_REQUEST_TEMPLATE/ directory, empty templates and symlinks", async () => {
    const repo = createBareRepo({
      ".github/PULL_REQUEST_TEMPLATE/feature.md": "## Feature\n",
      "docs/pull_request_template.md": "  \n",
    });
    expect(await findPullRequestTemplate(await checkout(repo))).toBeNull();

    // A symlink's target is never followed: it could point outside the repository.
    const secret = path.join(tempDir(), "secret.md");
    writeFileSync(secret, "## Not the repository's\n");
    gitIn(repo.seed, ["checkout", "-q", "main"]);
    symlinkSync(secret, path.join(repo.seed, "pull_request_template.md"));
    gitIn(repo.seed, ["add", "-A"]);
    gitIn(repo.seed, ["commit", "-q", "-m", "a symlinked template"]);
    gitIn(repo.seed, ["push", "-q", "origin", "HEAD:refs/heads/main"]);
    expect(await findPullRequestTemplate(await checkout(repo))).toBeNull();
  });
});

describe("fillPullRequestTemplate", () => {
  const TEMPLATE = "## Summary\n<!-- Say what changed and why. -->\n\n## Example\n";
  async function fill(reply: ScriptedReply, timeoutMs?: number, built: Record<string, string> = {}) {
    const repo = createBareRepo({ ".github/pull_request_template.md": TEMPLATE });
    const base = repo.head();
    repo.commit({ "src/a.js": "export const a = 1;\n", ...built }, "S1");
    const server = await startModelServer([reply]);
    try {
      const warnings: string[] = [];
      const deps = {
        modelFor: () => createModelClient({ baseURL: server.url, apiKey: "sk-test", model: "m", maxRetries: 0 }),
        log: {
          info: () => undefined,
          error: () => undefined,
          warn: (object: object) => void warnings.push(String((object as { reason?: unknown }).reason)),
        },
      };
      const job = { signal: new AbortController().signal, deliveryId: "d1" };
      const filled = await fillPullRequestTemplate(deps, job, {
        tree: await checkout(repo),
        plan: planSchema.parse(samplePlan()),
        config: DEFAULT_REPO_CONFIG,
        baseSha: base,
        verification: [],
        ...(timeoutMs ? { timeoutMs } : {}),
      });
      return { filled, warnings, request: server.requests[0] };
    } finally {
      await server.close();
    }
  }

  it("keeps an answer that starts and ends with its own code blocks, drops the template's comments and shows any other", async () => {
    const answer =
      "```\nconst before = 0;\n```\n## Summary\nAdds `a`. <!-- model aside -->\n<!-- Say what changed and why. -->\n\n## Example\n```js\nimport { a } from './a.js';\n```";
    const { filled, warnings, request } = await fill({ content: answer, usage: { prompt: 1200, completion: 80 } });
    expect(warnings).toEqual([]);
    expect(filled?.usage).toEqual({ prompt: 1200, completion: 80, cached: 0, requests: 1 });
    expect(filled?.text.startsWith("```\nconst before = 0;\n```\n## Summary\nAdds `a`.")).toBe(true);
    expect(filled?.text.endsWith("```js\nimport { a } from './a.js';\n```")).toBe(true);
    expect(filled?.text).not.toContain("Say what changed and why.");
    expect(filled?.text).toContain("&lt;!-- model aside -->");
    expect(JSON.stringify(request?.messages)).toContain("export const a = 1;");
  });

  it("lets the model's description neither ping people nor close other issues on merge", async () => {
    const answer =
      "## Summary\nFixes #99, closes octo-org/other#3 and resolves https://github.com/o/r/issues/4. Thanks @alice and @octo-org/admins! Mail me@example.com.\n\n## Example\nThe prefix #5 stays.";
    const { filled } = await fill({ content: answer });
    const text = filled?.text ?? "";
    expect(text).not.toMatch(/(^|[^\w])@(alice|octo-org)/);
    expect(text).not.toMatch(/\b(fixes|closes|resolves)\s+(\S*#\d|https:)/i);
    // Still readable: only zero-width spaces were added.
    expect(text.replaceAll("\u200b", "")).toBe(answer);
    expect(text).toContain("me@example.com");

    // Code blocks are left as written: they ping no one.
    const code = "## Summary\nAdds a component.\n\n## Example\n```ts\n@Component({ selector: 'a' })\nclass A {}\n```";
    expect((await fill({ content: code })).filled?.text).toBe(code);
  });

  it("reads the template at the build's base: one the build wrote is code under review, not the repository's template", async () => {
    const written = "## Summary\ncc @mallory\n\n## Example\n";
    const { filled, request } = await fill(
      { content: "## Summary\nAdds a. cc @mallory\n\n## Example\nnone" },
      undefined,
      { ".github/pull_request_template.md": written },
    );
    const asked = JSON.stringify(request?.messages);
    expect(asked).toContain(JSON.stringify(TEMPLATE).slice(1, -1));
    expect(filled?.text).toContain("cc @\u200bmallory");
  });

  it("closes a code fence or <details> the answer left open, so the rest of the pull request body is not swallowed", async () => {
    const { filled, warnings } = await fill({
      content:
        "## Summary\nAdds a.\n<details><summary>More</summary>\n\n## Example\n```js\nimport { a } from './a.js';",
    });
    expect(warnings).toEqual([]);
    const text = filled?.text ?? "";
    expect(text.match(/^```/gm)).toHaveLength(2);
    expect(text.endsWith("```\n\n</details>")).toBe(true);
  });

  it("gives up on a model that keeps trickling its answer, and falls back to the template", async () => {
    const { filled, warnings } = await fill(
      { content: "## Summary\nslow ".repeat(200), chunkDelayMs: 100, pieces: 200 },
      500,
    );
    expect(filled?.text).toContain("_Blueprint could not fill in this template; above is the plan's summary.");
    expect(warnings[0]).toMatch(/^the model call failed/);
  });

  it("puts the plan's summary under the first heading when the answer has none of the template's headings", async () => {
    const { filled, warnings } = await fill({ content: "Adds a." });
    expect(filled?.text).toBe(
      `## Summary\n\n${samplePlan().summary}\n\n_Blueprint could not fill in this template; above is the plan's summary. The plan, its step commits and the verification follow below._\n<!-- Say what changed and why. -->\n\n## Example`,
    );
    expect(warnings).toEqual(["the model's answer dropped or moved headings: ## Summary, ## Example"]);
  });
});

describe("diffForModel", () => {
  const section = (file: string, lines: number) =>
    `diff --git a/${file} b/${file}\n--- a/${file}\n+++ b/${file}\n@@ -0,0 +1,${lines} @@\n${Array.from({ length: lines }, (_, n) => `+line ${n} of ${file}`).join("\n")}\n`;

  it("keeps each file's patch whole or leaves it out by name, so a large file does not crowd out the small ones", () => {
    const patch = section("a.txt", 3) + section("big.lock", 2000) + section("z.txt", 3);
    const cut = diffForModel(patch, 500);
    expect(cut.omitted).toEqual(["big.lock"]);
    expect(cut.text).toContain("+line 2 of a.txt");
    expect(cut.text).toContain("+line 2 of z.txt");
    expect(cut.text).not.toContain("of big.lock\n");
    expect(cut.text).toContain("[1 file left out to fit 500 tokens: big.lock]");
    expect(diffForModel(patch, 100_000)).toEqual({ text: patch.trimEnd(), omitted: [] });
  });
});

describe("template sections", () => {
  const template =
    "## Summary\n<!-- ## Not a heading -->\n\n```\n## Not one either\n```\n\n### Testing\n- [ ] Tested by hand\n- [x] Read the guide\n";

  it("finds the headings GitHub renders, outside code fences and comments", () => {
    expect(templateHeadings(template).map(({ level, text }) => ({ level, text }))).toEqual([
      { level: 2, text: "Summary" },
      { level: 3, text: "Testing" },
    ]);
  });

  it("names headings an answer dropped, moved or re-levelled; extra headings are fine", () => {
    expect(lostHeadings(template, "## Summary\ntext\n## Extra\n### Testing\ntext")).toEqual([]);
    expect(lostHeadings(template, "## Summary\ntext")).toEqual([{ level: 3, text: "Testing" }]);
    expect(lostHeadings(template, "### Testing\n## Summary")).toEqual([{ level: 3, text: "Testing" }]);
    expect(lostHeadings(template, "# Summary\n### Testing")).toEqual([{ level: 2, text: "Summary" }]);
  });

  it("unticks what the answer ticked, but not what the template had ticked", () => {
    expect(untickNewCheckboxes(template, "- [x] Tested by hand\n* [X] Added tests\n- [x] Read the guide")).toBe(
      "- [ ] Tested by hand\n* [ ] Added tests\n- [x] Read the guide",
    );
  });

  it("puts text under the first heading, or on top without one", () => {
    expect(withTextUnderFirstHeading("## A\n## B", "summary")).toBe("## A\n\nsummary\n## B");
    expect(withTextUnderFirstHeading("no headings", "summary")).toBe("summary\n\nno headings");
  });
});
