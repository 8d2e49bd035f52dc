import { killRunningClis } from "./cli-driver.js";
import { main } from "./main.js";
import { removeScratchRepositories } from "./run-task.js";

// The CLI runs lead their own process groups (so a time limit can kill the commands they start):
// an interrupted eval takes them down with it. The results file already holds every finished run.
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    killRunningClis();
    removeScratchRepositories();
    process.stderr.write(
      `\neval: ${signal}: stopped; finished runs are in the results file (--resume it to carry on).\n`,
    );
    process.exit(130);
  });
}

/** `npm run eval` entry: starts things only. */
const { exitCode } = await main(process.argv.slice(2), process.env, {
  stdout: (text) => process.stdout.write(`${text}\n`),
  stderr: (text) => process.stderr.write(`${text}\n`),
});
process.exitCode = exitCode;
