// The static checks `npm test` runs beside vitest (scripts/test.mjs): the types of everything, ESLint and
// Prettier. They are independent, so they run side by side (two at a time: CI has two cores); each one's
// output is printed when it fails, and the run fails if any did.
import { spawn } from "node:child_process";

const CHECKS = [
  // One program for src/, the tests, benchmarks and eval: they share src/ and its libraries' types, checked
  // once (the build only strips types: scripts/build.mjs).
  ["types of src/, test/, bench/ and eval/", "tsc", ["-p", "test/tsconfig.json"]],
  ["ESLint", "eslint", ["--max-warnings", "0", "."]],
  ["Prettier", "prettier", ["--check", "--log-level", "warn", "."]],
];
const AT_ONCE = 2;

function run([name, bin, args]) {
  return new Promise((resolve) => {
    const child = spawn(`node_modules/.bin/${bin}`, args, { stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (chunk) => (output += chunk));
    child.stderr.on("data", (chunk) => (output += chunk));
    child.on("error", (error) => resolve({ name, ok: false, output: error.message }));
    child.on("close", (code) => resolve({ name, ok: code === 0, output }));
  });
}

const waiting = [...CHECKS];
const results = [];
await Promise.all(
  Array.from({ length: AT_ONCE }, async () => {
    for (let check = waiting.shift(); check; check = waiting.shift()) results.push(await run(check));
  }),
);
const failed = results.filter((result) => !result.ok);
for (const { name, output } of failed) process.stderr.write(`\n✗ ${name} failed:\n${output}\n`);
process.exit(failed.length > 0 ? 1 : 0);
