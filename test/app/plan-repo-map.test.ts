import { describe, expect, it } from "vitest";
import { readdirSync } from "node:fs";
import path from "node:path";
import { samplePlan } from "../helpers/model-server.js";
import { commentPayload } from "../helpers/app.js";
import { useAppFixture } from "../helpers/app-fixture.js";

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
    await fx.app.deliver("issue_comment", commentPayload({ body: "/plan computeShippingCost rounds the wrong way", cloneUrl: fx.repo.url }));

    const messages = fx.model.requests[1]?.messages ?? [];
    const map = messages.map((message) => (message.role === "tool" && typeof message.content === "string" ? message.content : "")).join("");
    expect(map).toMatch(/^Repository map: 3 tracked files/);
    // Unmentioned, src/a/invoice.js would come first (same rank, earlier path).
    expect(map.indexOf("src/b/shipping.js")).toBeGreaterThan(0);
    expect(map.indexOf("src/b/shipping.js")).toBeLessThan(map.indexOf("src/a/invoice.js"));
    // The parsed tags persist beside the mirror, out of the agent's sandbox, for the next process.
    const mirrors = readdirSync(path.join(fx.app.workdir, "mirrors"));
    const tagDir = mirrors.find((name) => name.endsWith(".repo-map"));
    expect(tagDir).toBeDefined();
    expect(readdirSync(path.join(fx.app.workdir, "mirrors", tagDir ?? "")).some((name) => /^repo-map-tags-[0-9a-f]{16}\.json$/.test(name))).toBe(true);
  });
});
