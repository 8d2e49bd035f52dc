import { beforeAll, describe, expect, it } from "vitest";
import { loadRealSuite, validateInstance, type RealInstance } from "../../eval/swe/index.js";

/**
 * SWE-bench's gold validation of a few real tasks whose `npm ci` is quick. It needs the npm
 * registry and the tasks' repositories, from $BLUEPRINT_EVAL_REPOS (DIR/owner__name …). The suite
 * ships references, not the repositories' code, and tests reach no host but the npm registry: without
 * that variable this file does not run (say `BLUEPRINT_EVAL_REPOS=DIR npx vitest run
 * test/eval/real-suite-validate.test.ts`). All tasks: `npm run eval -- --validate`.
 */
const TASKS = ["jshttp__negotiator-37", "jshttp__type-is-19", "pillarjs__send-28"];

describe.runIf(process.env.BLUEPRINT_EVAL_REPOS)("the real suite's gold validation (BLUEPRINT_EVAL_REPOS)", () => {
  let instances: RealInstance[] = [];

  beforeAll(async () => {
    instances = await loadRealSuite({
      reposDir: process.env.BLUEPRINT_EVAL_REPOS,
      problemStatements: false,
      only: TASKS,
    });
  }, 120_000);

  it.each(TASKS)(
    "%s: FAIL_TO_PASS fails and PASS_TO_PASS passes without the fix, all pass with it",
    async (id) => {
      const inst = instances.find((candidate) => candidate.instance_id === id);
      if (!inst) throw new Error(`${id} did not load`);
      const result = await validateInstance(inst, inst.source, { timeoutMs: 60_000, installTimeoutMs: 120_000 });
      expect(result.problems).toEqual([]);
      expect(result.ok).toBe(true);
    },
    180_000,
  );
});
