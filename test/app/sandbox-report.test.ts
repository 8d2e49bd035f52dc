import { describe, expect, it } from "vitest";
import { commentPayload } from "../helpers/app.js";
import { useAppFixture } from "../helpers/app-fixture.js";
import { samplePlan } from "../helpers/model-server.js";

const plan = samplePlan({
  verification: ["test -f notes.txt"],
  steps: [{ id: "S1", title: "Add notes", details: "Create notes.txt", files: ["notes.txt"], deps: [] }],
});
const script = [
  { toolCalls: [{ name: "run_command", arguments: { command: "echo hi > notes.txt", timeout_s: null } }] },
  { toolCalls: [{ name: "complete_step", arguments: { step_id: "S1", summary: "Added notes." } }] },
];

describe("where the build's commands ran, in the build report", () => {
  const fx = useAppFixture({ files: { "README.md": "# Hello\n" }, permissions: { maintainer: "write" } });

  it.each([
    ["none", true],
    ["bwrap", false],
  ] as const)(
    "BLUEPRINT_SANDBOX=%s: the report and the pull request say so only when no sandbox held the commands",
    async (sandbox, warned) => {
      await fx.start(script, { BLUEPRINT_SANDBOX: sandbox });
      fx.seedPlan(plan);
      await fx.app.deliver("issue_comment", commentPayload({ body: "/build", cloneUrl: fx.repo.url }));
      expect(fx.repo.show("blueprint/issue-1", "notes.txt")).toBe("hi\n");
      const report = fx.github
        .botComments()
        .map((comment) => comment.body)
        .join("\n");
      const pull = fx.github.pulls[0]?.body ?? "";
      const warning = /commands ran \*\*without a sandbox\*\*/;
      expect(warning.test(report)).toBe(warned);
      expect(warning.test(pull)).toBe(warned);
    },
  );
});

describe("the build's network, in the build report", () => {
  const fx = useAppFixture({ files: { "README.md": "# Hello\n" }, permissions: { maintainer: "write" } });

  it("names each refused host with `blocked` and a count, and each allow-list entry the App's ceiling dropped, in the thread and the pull request", async () => {
    fx.repo.commit(
      { ".github/blueprint.yml": "network:\n  allow: [registry.npmjs.org, github.com]\n" },
      "configure blueprint",
    );
    // No request leaves this machine: example.invalid is refused by the allow-list before any lookup.
    const probe = "for i in 1 2 3; do curl -sS -o /dev/null https://example.invalid/ 2>&1; done; echo hi > notes.txt";
    await fx.start(
      [
        { toolCalls: [{ name: "run_command", arguments: { command: probe, timeout_s: null } }] },
        { toolCalls: [{ name: "complete_step", arguments: { step_id: "S1", summary: "Added notes." } }] },
      ],
      { BLUEPRINT_SANDBOX: "bwrap" },
    );
    fx.seedPlan(plan);
    await fx.app.deliver("issue_comment", commentPayload({ body: "/build", cloneUrl: fx.repo.url }));
    expect(fx.repo.show("blueprint/issue-1", "notes.txt")).toBe("hi\n");
    const report = fx.github
      .botComments()
      .map((comment) => comment.body)
      .join("\n");
    const pull = fx.github.pulls[0]?.body ?? "";
    for (const text of [report, pull]) {
      expect(text).toContain("network: blocked example.invalid ×3");
      expect(text).toContain(
        "`network:` in `.github/blueprint.yml` allows `github.com`, which this App does not (its BLUEPRINT_NETWORK_ALLOW)",
      );
    }
    expect(report).not.toContain("blocked registry.npmjs.org");
  });
});
