// The SWE-bench-format side of the eval: instances, checkouts, dependency installs, judging by the
// repository's own tests, gold validation, and the real suite (see README.md here).
export {
  loadInstances,
  parseInstances,
  sweInstanceSchema,
  TEST_RUNNERS,
  type SweInstance,
  type TestRunner,
} from "./instance.js";
export { checkoutInstance, findRepository, type RepoSource } from "./checkout.js";
export {
  installDependencies,
  runTests,
  installCommand,
  testCommand,
  type CommandOptions,
  type TestRun,
} from "./commands.js";
export { parseTestLog, type TestResults, type TestStatus } from "./parse-test-log.js";
export { judgeInstance, reportFromResults, type JudgeReport, type JudgeOptions, type TestListReport } from "./judge.js";
export {
  validateInstance,
  runWithAndWithoutGold,
  type ValidateOptions,
  type ValidationResult,
  type GoldRuns,
} from "./validate.js";
export { filesOfPatch, applyPatch } from "./patch.js";
export {
  loadRealSuite,
  readRealSuites,
  REAL_SUITE_DIR,
  defaultCacheDir,
  newFilePatch,
  trimLinks,
  issueFromGitHub,
  type RealInstance,
  type RealSuiteOptions,
} from "./real-suite.js";
