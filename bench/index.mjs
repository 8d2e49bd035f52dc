// `npm run bench [name…]`: runs each bench below in turn (or only the named ones).
// A bench is a module here exporting `async function run()` that prints its own results;
// add one by adding a line to BENCHES. Benches measure, they do not assert: they are not tests.
// A TypeScript bench (`file` ending in .ts) runs in a child process under `node --import tsx`,
// in its own process group, killed with everything it started if it outlives `hardLimitS`.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { BASELINE_ROUNDS, baselineRef } from "./support/baseline.mjs";

const BENCHES = [
  { name: "workspace", title: "Time to a ready workspace: full clone, blobless clone, cached mirror" },
  {
    name: "repo-map",
    title:
      "repo_map on 5,000+ real source files: cold map, warm map after a one-file change, tokens against the budget",
  },
  { name: "context", title: "Prompt tokens of a 30-turn planning session: lean context versus the whole raw history" },
  {
    name: "ablate",
    file: "ablate/index.mjs",
    title: "Hand-written replacements against the libraries they replace, same run, interleaved rounds",
  },
  {
    name: "load",
    file: "load/index.ts",
    // Up to BENCH_LOAD_DEADLINE_S (300 s) per run, and BENCH_LOAD_WARM_UP=0,3000 makes four runs; BENCH_BASELINE
    // makes each run 2 × BENCH_BASELINE_ROUNDS (2), after the baseline's build.
    hardLimitS: loadHardLimitS(),
    title: "1000 signed webhooks at concurrency 100 over 100 installations, against the running app and a local GitHub",
  },
];

const only = process.argv.slice(2);
const unknown = only.filter((name) => !BENCHES.some((bench) => bench.name === name));
if (unknown.length > 0) {
  console.error(`unknown bench: ${unknown.join(", ")} (known: ${BENCHES.map((bench) => bench.name).join(", ")})`);
  process.exit(2);
}

for (const bench of BENCHES.filter((b) => only.length === 0 || only.includes(b.name))) {
  console.log(`\n== ${bench.name}: ${bench.title}\n`);
  try {
    const file = bench.file ?? `${bench.name}.mjs`;
    if (file.endsWith(".ts")) {
      await runTypeScript(new URL(`./${file}`, import.meta.url), bench.hardLimitS ?? 600);
    } else {
      const { run } = await import(`./${file}`);
      await run();
    }
  } catch (error) {
    // One broken bench should not hide the others' numbers.
    console.error(`bench ${bench.name} failed:`, error);
    process.exitCode = 1;
  }
}

/** The load bench's hard limit: longer with BENCH_BASELINE (see bench/load/pairs.ts), build included. */
function loadHardLimitS() {
  return baselineRef() ? 1500 * 2 * BASELINE_ROUNDS + 900 : 1500;
}

/** `node --import tsx`, importing the module and awaiting its `run()`; the whole group is killed at the hard limit. */
function runTypeScript(url, hardLimitS) {
  const script = `import(${JSON.stringify(url.href)}).then((m) => m.run()).then(() => process.exit(0), (error) => { console.error(error); process.exit(1); });`;
  const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
    cwd: fileURLToPath(new URL("..", import.meta.url)),
    stdio: "inherit",
    detached: true,
  });
  const signalGroup = (signal) => {
    try {
      process.kill(-child.pid, signal);
    } catch {
      // Already gone.
    }
  };
  // SIGTERM first: the bench stops what it started in other process groups (the app), then exits.
  const killGroup = () => signalGroup("SIGTERM");
  process.once("exit", killGroup);
  const timer = setTimeout(() => {
    console.error(`bench ${url.pathname} outlived its hard limit of ${hardLimitS} s: stopping it`);
    signalGroup("SIGTERM");
    setTimeout(() => signalGroup("SIGKILL"), 10_000).unref();
  }, hardLimitS * 1000);
  return new Promise((resolve, reject) => {
    child.on("exit", (code, signal) => {
      clearTimeout(timer);
      signalGroup("SIGKILL"); // anything it left behind in its group
      process.removeListener("exit", killGroup);
      if (code === 0) resolve();
      else reject(new Error(`exited with ${code ?? signal}`));
    });
  });
}
