import { main } from "./main.js";

/** `npm run eval` entry: starts things only. */
const { exitCode } = await main(process.argv.slice(2), process.env, {
  stdout: (text) => process.stdout.write(`${text}\n`),
  stderr: (text) => process.stderr.write(`${text}\n`),
});
process.exitCode = exitCode;
