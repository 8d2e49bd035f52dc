import type { InstanceSource, Judge, SweInstance } from "./judge.js";
import { defaultEvalCacheDir, type NpmSource } from "./npm-tarball.js";
import { smokeSources, type SmokeSources } from "./smoke-sources.js";
import { loadTasks, type EvalTask } from "./task-suite.js";

/**
 * One thing to evaluate: a smoke-suite task (a published package's two versions and a hidden check;
 * `sources` fetches them once) or a SWE-bench-format instance (repository at base_commit, judged by its
 * own tests).
 */
export type EvalItem =
  | { kind: "smoke"; id: string; task: EvalTask; sources(): Promise<SmokeSources> }
  | { kind: "swe"; id: string; instance: SweInstance; source: InstanceSource };

/**
 * A shipped suite (the real one may take its repositories from a folder instead of fetching them), or an
 * external dataset; `trustCommands`: its instances' own `install` and `test_cmd` may run.
 */
export type SuiteChoice =
  | { suite: "smoke" | "real"; reposDir?: string | undefined }
  | { dataset: string; reposDir: string; trustCommands?: boolean };

/** The items a run covers; `only` picks some by id, and an unknown id is an error, not a silent skip. */
export async function chooseItems(
  choice: SuiteChoice,
  only: string[] | undefined,
  deps: {
    smokeDir: string;
    npm?: NpmSource | undefined;
    cacheDir?: string | undefined;
    realRoot?: string | undefined;
    judge: () => Judge;
    problemStatements?: boolean;
  },
): Promise<EvalItem[]> {
  if ("suite" in choice && choice.suite === "smoke") {
    const npm = deps.npm ?? { cacheDir: defaultEvalCacheDir() };
    return loadTasks(deps.smokeDir, only).map((task) => {
      let fetched: Promise<SmokeSources> | null = null;
      return { kind: "smoke", id: task.id, task, sources: () => (fetched ??= smokeSources(task, npm)) };
    });
  }
  const items: EvalItem[] =
    "dataset" in choice
      ? trustedInstances(deps.judge().loadInstances(choice.dataset), choice).map((instance) => ({
          kind: "swe",
          id: instance.instance_id,
          instance,
          source: { reposDir: choice.reposDir },
        }))
      : (
          await deps.judge().loadRealSuite({
            ...(deps.realRoot ? { root: deps.realRoot } : {}),
            ...(choice.reposDir ? { reposDir: choice.reposDir } : {}),
            ...(deps.cacheDir ? { cacheDir: deps.cacheDir } : {}),
            ...(only ? { only } : {}),
            ...(deps.problemStatements === false ? { problemStatements: false } : {}),
          })
        ).map((instance) => ({
          kind: "swe",
          id: instance.instance_id,
          instance,
          source: "source" in instance ? instance.source : { bundle: instance.bundle },
        }));
  if (items.length === 0)
    throw new Error(
      "dataset" in choice
        ? `${choice.dataset} holds no instances`
        : "the real suite (eval/suites/real/*/instances.jsonl) holds no instances",
    );
  const ids = items.map((item) => item.id);
  const unknown = (only ?? []).filter((id) => !ids.includes(id));
  if (unknown.length > 0)
    throw new Error(
      `unknown task${unknown.length > 1 ? "s" : ""}: ${unknown.join(", ")} (the suite has: ${ids.join(", ")})`,
    );
  return items.filter((item) => !only || only.includes(item.id));
}

/**
 * A dataset's own `install` and `test_cmd` are commands from outside this repository that would run
 * on this machine: refused, naming the instances, unless --trust-dataset-commands says they were read.
 * Without them the judge installs with npm and tests with the `test_runner`'s own command.
 */
function trustedInstances(
  instances: SweInstance[],
  choice: { dataset: string; trustCommands?: boolean },
): SweInstance[] {
  if (choice.trustCommands) return instances;
  const carrying = instances
    .filter((instance) => instance.install !== undefined || instance.test_cmd !== undefined)
    .map((instance) => instance.instance_id);
  if (carrying.length === 0) return instances;
  const named =
    carrying.length > 3 ? `${carrying.slice(0, 3).join(", ")} and ${carrying.length - 3} more` : carrying.join(", ");
  throw new Error(
    `${choice.dataset}: ${named} carr${carrying.length === 1 ? "ies its" : "y their"} own install or test_cmd, commands from a dataset Blueprint does not ship that would run on this machine. ` +
      "Read them, then give --trust-dataset-commands to run them (in the sandbox, like every install and test), or drop the fields (install is then npm ci or npm install, the tests the test_runner's command).",
  );
}

/** The files the real change touched: what the plan is measured against. */
export function goldFiles(item: EvalItem, judge: Judge | null): string[] | null {
  if (item.kind === "smoke") return item.task.meta.changedFiles;
  return item.instance.patch && judge ? judge.filesOfPatch(item.instance.patch) : null;
}
