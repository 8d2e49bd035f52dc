// `npm test` after the build: vitest, with the static checks (scripts/checks.mjs: types, ESLint, Prettier)
// running beside it at the lowest CPU priority. Most test files wait on git, bubblewrap, Redis and child
// processes, so the two cores are not all in use; the checks take what is left instead of a minute of their
// own before the first test. Arguments go to vitest (`npm test -- test/app/plan.test.ts`). The run fails
// when either does; the checks' output is printed, after vitest's, only when they fail.
import { spawn } from "node:child_process";
import os from "node:os";

function start(command, args, stdio) {
  const child = spawn(command, args, { stdio });
  const done = new Promise((resolve) => {
    child.on("error", (error) => resolve({ code: 1, error }));
    child.on("close", (code, signal) => resolve({ code: code ?? (signal ? 1 : 0) }));
  });
  return { child, done };
}

const checks = start(process.execPath, ["scripts/checks.mjs"], ["ignore", "pipe", "pipe"]);
try {
  os.setPriority(checks.child.pid ?? 0, 19);
} catch {
  // Not allowed to lower it (some containers): the checks then share the CPU as equals.
}
let checksOutput = "";
checks.child.stdout.on("data", (chunk) => (checksOutput += chunk));
checks.child.stderr.on("data", (chunk) => (checksOutput += chunk));

const vitest = start("node_modules/.bin/vitest", ["run", ...process.argv.slice(2)], "inherit");
const [tests, checked] = await Promise.all([vitest.done, checks.done]);
if (tests.error) process.stderr.write(`vitest could not start: ${tests.error.message}\n`);
if (checked.code !== 0) process.stderr.write(checksOutput || `static checks failed: ${checked.error?.message}\n`);
process.exit(tests.code !== 0 || checked.code !== 0 ? 1 : 0);
