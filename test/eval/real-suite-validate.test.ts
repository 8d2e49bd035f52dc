import { beforeAll, describe, expect, it } from "vitest";
import { loadRealSuite, validateInstance, type RealInstance } from "../../eval/swe/index.js";

/**
 * SWE-bench's gold validation of a few real tasks whose `npm ci` is quick. It needs the npm
 * registry, and the tasks' repositories: from $BLUEPRINT_EVAL_REPOS (DIR/owner__name …) when set,
 * otherwise cloned from github.com into the eval cache. All tasks: `npm run eval -- --validate`.
 */
const TASKS = ["jshttp__negotiator-37", "jshttp__type-is-19", "pillarjs__send-28"];

describe("the real suite's gold validation", () => {
  let instances: RealInstance[] = [];

  beforeAll(async () => {
    instances = await loadRealSuite({ reposDir: process.env.BLUEPRINT_EVAL_REPOS, problemStatements: false, only: TASKS });
  }, 120_000);

  it.each(TASKS)("%s: FAIL_TO_PASS fails and PASS_TO_PASS passes without the fix, all pass with it", async (id) => {
    const inst = instances.find((candidate) => candidate.instance_id === id);
    if (!inst) throw new Error(`${id} did not load`);
    const result = await validateInstance(inst, inst.source, { timeoutMs: 60_000, installTimeoutMs: 120_000 });
    expect(result.problems).toEqual([]);
    expect(result.ok).toBe(true);
  }, 180_000);
});
