import { describe, expect, it } from "vitest";
import { existsSync, readdirSync } from "node:fs";
import path from "node:path";
import { samplePlan } from "../helpers/model-server.js";
import { commentPayload } from "../helpers/app.js";
import { useAppFixture } from "../helpers/app-fixture.js";
import { PATIENCE_MS } from "../helpers/patience.js";

const FILES = {
  "README.md": "# Shop\n",
  "src/a/invoice.js": "export function formatInvoiceTotal(total) {\n  return total.toFixed(2);\n}\n",
  "src/b/shipping.js": "export function computeShippingCost(weight) {\n  return weight * 2;\n}\n",
};

describe("/plan and repo_map", () => {
  const fx = useAppFixture({ files: FILES, permissions: { maintainer: "write" } });

  it("ranks what the thread mentions first in the planning run's repo map", async () => {
    await fx.start([
      { toolCalls: [{ name: "repo_map", arguments: { focus: null } }] },
      { toolCalls: [{ name: "submit_plan", arguments: samplePlan() }] },
    ]);
    await fx.app.deliver(
      "issue_comment",
      commentPayload({ body: "/plan computeShippingCost rounds the wrong way", cloneUrl: fx.repo.url }),
    );

    const messages = fx.model.requests[1]?.messages ?? [];
    const map = messages
      .map((message) => (message.role === "tool" && typeof message.content === "string" ? message.content : ""))
      .join("");
    expect(map).toMatch(/^Repository map: 3 tracked files/);
    // Unmentioned, src/a/invoice.js would come first (same rank, earlier path).
    expect(map.indexOf("src/b/shipping.js")).toBeGreaterThan(0);
    expect(map.indexOf("src/b/shipping.js")).toBeLessThan(map.indexOf("src/a/invoice.js"));
    // The parsed tags persist beside the mirror, out of the agent's sandbox, for the next process.
    const mirrors = readdirSync(path.join(fx.app.workdir, "mirrors"));
    const tagDir = mirrors.find((name) => name.endsWith(".repo-map"));
    expect(tagDir).toBeDefined();
    expect(
      readdirSync(path.join(fx.app.workdir, "mirrors", tagDir ?? "")).some((name) =>
        /^repo-map-tags-[0-9a-f]{16}\.json$/.test(name),
      ),
    ).toBe(true);
  });

  it("collects the repository's tags while the model answers its first request", async () => {
    const tagFile = () => {
      const mirrors = path.join(fx.app.workdir, "mirrors");
      const dir = existsSync(mirrors) ? readdirSync(mirrors).find((name) => name.endsWith(".repo-map")) : undefined;
      return (
        dir !== undefined && readdirSync(path.join(mirrors, dir)).some((name) => name.startsWith("repo-map-tags-"))
      );
    };
    let collectedWhileAsked = false;
    await fx.start([
      // The model has not called repo_map (and never will): the run collected and saved the tags meanwhile.
      async () => {
        for (let waited = 0; waited < PATIENCE_MS && !tagFile(); waited += 50)
          await new Promise((resolve) => setTimeout(resolve, 50));
        collectedWhileAsked = tagFile();
        return { toolCalls: [{ name: "submit_plan", arguments: samplePlan() }] };
      },
    ]);
    await fx.app.deliver(
      "issue_comment",
      commentPayload({ body: "/plan round shipping costs up", cloneUrl: fx.repo.url }),
    );

    expect(collectedWhileAsked).toBe(true);
    expect(fx.model.requests).toHaveLength(1);
    expect(fx.github.comments.some((comment) => comment.body.includes("Plan"))).toBe(true);
  });

  it("spends nothing on files whose only tags are imports: the definitions they use come first", async () => {
    const tests = Object.fromEntries(
      Array.from({ length: 25 }, (_, i) => [
        `tests/option${i}.test.js`,
        `const commander = require('../');\n\ntest('option ${i}', () => {\n  const program = new commander.Command();\n  program.option('-x').parseOptions([]);\n});\n`,
      ]),
    );
    fx.createRepo({
      ...tests,
      "index.js": "const { Command } = require('./lib/command.js');\nexports.Command = Command;\n",
      "lib/command.js":
        "class Command {\n  option(flags) {\n    return this;\n  }\n  parseOptions(argv) {\n    return argv;\n  }\n}\nexports.Command = Command;\n",
    });
    await fx.start([
      { toolCalls: [{ name: "repo_map", arguments: { focus: null } }] },
      { toolCalls: [{ name: "submit_plan", arguments: samplePlan() }] },
    ]);
    await fx.app.deliver(
      "issue_comment",
      commentPayload({ body: "/plan make negated options order-independent", cloneUrl: fx.repo.url }),
    );

    const map = (fx.model.requests[1]?.messages ?? [])
      .map((message) => (message.role === "tool" && typeof message.content === "string" ? message.content : ""))
      .join("");
    expect(map).toContain("parseOptions(argv)");
    expect(map).not.toContain("const commander = require('../');");
    // Such a file is skipped: its uses rank the definitions it uses.
    expect(map).not.toContain("tests/option0.test.js");
    expect(map).toMatch(/^Repository map: 27 tracked files/);
  });
});
