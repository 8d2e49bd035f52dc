import { evalSandbox } from "../../eval/sandbox.js";
import { installDependencies, sweInstanceSchema } from "../../eval/swe/index.js";

/**
 * The eval's dependency install in a process of its own, whose environment (OPENAI_API_KEY, HOME,
 * BLUEPRINT_SANDBOX, BLUEPRINT_NETWORK_ALLOW) is the one the test gives it, as `npm run eval`'s
 * would be: `node --import tsx install-driver.ts DIR INSTALL` prints the install's result as JSON.
 */
const [dir = "", install = ""] = process.argv.slice(2);
const instance = sweInstanceSchema.parse({
  instance_id: "probe-1",
  repo: "example/probe",
  base_commit: "0".repeat(40),
  problem_statement: "-",
  test_patch: "-",
  FAIL_TO_PASS: [],
  PASS_TO_PASS: [],
  install,
});
const sandbox = evalSandbox(process.env, (text) => process.stderr.write(`${text}\n`));
process.stdout.write(JSON.stringify(await installDependencies(instance, dir, { timeoutMs: 120_000, sandbox })));
