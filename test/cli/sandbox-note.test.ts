import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { createBareRepo } from "../helpers/git-repo.js";
import { pathWithout } from "../helpers/no-bubblewrap.js";
import { samplePlan, startModelServer, type ModelServer } from "../helpers/model-server.js";
import { assertCliBuilt, blueprint } from "./support.js";

/**
 * The CLI keeps `auto` (a person's own machine, maybe without bubblewrap), but always says when commands run
 * unsandboxed.
 */

const submit = { toolCalls: [{ name: "submit_plan", arguments: samplePlan() }] };
const NOTE = /note: the agent's commands run WITHOUT a sandbox here .*set BLUEPRINT_SANDBOX=bwrap to refuse instead/;

describe("the CLI without a sandbox", () => {
  let model: ModelServer | null = null;
  beforeAll(() => assertCliBuilt());
  afterEach(async () => {
    await model?.close();
    model = null;
  });

  it.each([
    ["bubblewrap broken, auto (the CLI's default)", () => ({ PATH: pathWithout("broken", ["git", "sh"]) }), true],
    ["bubblewrap working (control)", () => ({}), false],
  ] as const)(
    "%s: plans, and says so on stderr without --verbose only when commands are unsandboxed",
    async (_, env, noted) => {
      model = await startModelServer([submit]);
      const repo = createBareRepo({ "README.md": "# Hello\n" });
      const run = await blueprint(["plan", "Add a retry helper"], {
        cwd: repo.seed,
        env: { OPENAI_BASE_URL: model.url, OPENAI_API_KEY: "sk-cli-test-key-000000000000000000000", ...env() },
      });
      expect(run.code, run.stderr).toBe(0);
      expect(NOTE.test(run.stderr)).toBe(noted);
    },
  );
});
