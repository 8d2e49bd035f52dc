import path from "node:path";

/**
 * The harness's view of the SWE judge (eval/swe/, see the eval contract): the functions it calls, and
 * nothing else. Runs take a `Judge`, so tests can put a scripted one in its place; `loadJudge` brings
 * the real module in.
 */
export interface SweInstance {
  instance_id: string;
  repo: string;
  base_commit: string;
  problem_statement: string;
  /** The gold patch (needed for --validate and plan-quality scoring). */
  patch?: string | undefined;
  test_patch: string;
  FAIL_TO_PASS: string[];
  PASS_TO_PASS: string[];
}

export type InstanceSource = { bundle: string } | { reposDir: string };

export type RealSuiteInstance = SweInstance & ({ source: InstanceSource } | { bundle: string });

export interface JudgeReport {
  resolved: boolean;
  FAIL_TO_PASS: { success: string[]; failure: string[] };
  PASS_TO_PASS: { success: string[]; failure: string[] };
  log: string;
  error?: string | undefined;
}

export interface Validation {
  ok: boolean;
  problems: string[];
  durationMs: number;
}

interface TimedOptions {
  timeoutMs: number;
  signal?: AbortSignal;
}

export interface Judge {
  loadInstances(file: string): SweInstance[];
  /** The shipped real suite: each instance with where its repository comes from (`source`; `bundle` in the contract's first draft). */
  loadRealSuite(options?: { root?: string; reposDir?: string; only?: string[] }): RealSuiteInstance[] | Promise<RealSuiteInstance[]>;
  checkoutInstance(inst: SweInstance, source: InstanceSource, into: string): Promise<void>;
  installDependencies(inst: SweInstance, dir: string, opts: TimedOptions): Promise<{ ok: boolean; log: string }>;
  judgeInstance(inst: SweInstance, dir: string, opts: TimedOptions): Promise<JudgeReport>;
  validateInstance(inst: SweInstance, source: InstanceSource, opts: TimedOptions): Promise<Validation>;
  filesOfPatch(patch: string): string[];
}

const FUNCTIONS = ["loadInstances", "loadRealSuite", "checkoutInstance", "installDependencies", "judgeInstance", "validateInstance", "filesOfPatch"] as const;

/**
 * The judge module, loaded when a run needs it (the smoke suite does not): the specifier is a variable
 * so the harness type-checks and runs its smoke suite while eval/swe/ is written in parallel.
 */
export async function loadJudge(): Promise<Judge> {
  const specifier = path.join(import.meta.dirname, "swe", "index.js");
  let loaded: unknown;
  try {
    loaded = await import(specifier);
  } catch (error) {
    throw new Error(`the SWE judge (eval/swe/index.ts) could not be loaded: ${error instanceof Error ? error.message : String(error)}`);
  }
  const missing = FUNCTIONS.filter((name) => typeof (loaded as Record<string, unknown> | null)?.[name] !== "function");
  if (missing.length > 0) throw new Error(`the SWE judge (eval/swe/index.ts) lacks ${missing.join(", ")}`);
  return loaded as Judge;
}
