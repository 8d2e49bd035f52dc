#!/usr/bin/env node
// The CLI is compiled to lib/ by `npm run build`; a fresh checkout has no lib/ yet, so say what to run.
const entry = new URL("../lib/cli.js", import.meta.url);
try {
  await import(entry.href);
} catch (error) {
  const missing = error?.code === "ERR_MODULE_NOT_FOUND" && String(error.message).includes(entry.pathname);
  if (!missing) throw error;
  const root = new URL("..", import.meta.url).pathname;
  process.stderr.write(
    `blueprint: the CLI is not built yet (${entry.pathname} is missing).\nRun \`npm install && npm run build\` in ${root}, then try again.\n`,
  );
  process.exitCode = 1;
}
