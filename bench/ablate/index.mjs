// `npm run bench ablate`: each hand-written replacement of a library against the library, measured in
// the same run, interleaved (the order flips every round), BENCH_ABLATE_ROUNDS rounds (5), medians.
// Ours is kept where the library's figure is at least 1.25× ours (issue #37: it must win by a quarter of
// its own figure). BENCH_ABLATE_ONLY=fetch,mint,intake,git runs some of them. The load average is printed
// before and after each pair: on a shared machine a high one makes a verdict unsafe.
import { fixed, KEEP_MARGIN, loadAverage, ROUNDS } from "./rounds.mjs";

const PAIRS = {
  fetch: () => import("./fetch.mjs"),
  mint: () => import("./mint.mjs"),
  intake: () => import("./intake.mjs"),
  git: () => import("./git.mjs"),
};

export async function run() {
  const only = (process.env.BENCH_ABLATE_ONLY ?? "").split(",").filter(Boolean);
  const verdicts = [];
  console.log(`${ROUNDS} rounds per pair, interleaved; node ${process.version}; ${new Date().toISOString()}`);
  for (const [name, load] of Object.entries(PAIRS)) {
    if (only.length > 0 && !only.includes(name)) continue;
    const before = loadAverage();
    console.log(`\n${name} (load average before: ${before})`);
    for (const line of await (await load()).run()) verdicts.push({ ...line, load: `${before} → ${loadAverage()}` });
  }
  console.log(`\nsummary (keep ours when library ÷ ours ≥ ${1 + KEEP_MARGIN}):\n`);
  for (const v of verdicts) {
    console.log(
      `  ${v.name}: ours ${fixed(v.ours)} ${v.unit}, library ${fixed(v.library)} ${v.unit}, ` +
        `library ÷ ours ${v.ratio.toFixed(2)} → ${v.call}; load ${v.load}`,
    );
  }
}
