import type { EvalSandbox } from "./sandbox.js";

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
  /** Blueprint's extensions: commands a dataset gives, run only with --trust-dataset-commands. */
  install?: string | undefined;
  test_cmd?: string | undefined;
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
  /** Where installs and tests run: the eval's one choice (sandbox.ts). */
  sandbox?: EvalSandbox;
}

export interface Judge {
  loadInstances(file: string): SweInstance[];
  /**
   * The shipped real suite: each instance with where its repository comes from (`source`; `bundle` in the contract's
   * first draft).
   */
  loadRealSuite(options?: {
    root?: string;
    reposDir?: string;
    cacheDir?: string;
    only?: string[];
    problemStatements?: boolean;
  }): RealSuiteInstance[] | Promise<RealSuiteInstance[]>;
  checkoutInstance(inst: SweInstance, source: InstanceSource, into: string): Promise<void>;
  installDependencies(inst: SweInstance, dir: string, opts: TimedOptions): Promise<{ ok: boolean; log: string }>;
  judgeInstance(inst: SweInstance, dir: string, opts: TimedOptions): Promise<JudgeReport>;
  validateInstance(inst: SweInstance, source: InstanceSource, opts: TimedOptions): Promise<Validation>;
  filesOfPatch(patch: string): string[];
}

/** The judge module (eval/swe/): loaded when a run needs it, so the smoke suite never loads it. */
export async function loadJudge(): Promise<Judge> {
  const judge: Judge = await import("./swe/index.js");
  return judge;
}
