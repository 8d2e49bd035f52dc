// One cold repo_map in a process of its own (no tags cached, no parser workers yet): the repo-map
// bench starts several, so the cold figure is a median rather than one draw of a noisy machine.
// Argument: the repository; prints one JSON line. With a second argument "twice", a second cold map
// follows in the same process (its parser workers running).
import { createHash } from "node:crypto";
import { buildRepoMap } from "../../lib/tools/repo-map/build-map.js";
import { clearTagCache } from "../../lib/tools/repo-map/collect-tags.js";
import { stopParserWorkers } from "../../lib/tools/repo-map/tag-pool.js";

const [root, twice] = process.argv.slice(2);
const budget = Number(process.env.BENCH_MAP_BUDGET ?? 4096);

async function timed() {
  const started = performance.now();
  const cpu = process.cpuUsage();
  const map = await buildRepoMap(root, { tokens: budget });
  const ms = performance.now() - started;
  const { user, system } = process.cpuUsage(cpu);
  return { ms, cpuMs: (user + system) / 1000, tokens: map.tokens, parsed: map.parsed, sha256: createHash("sha256").update(map.text).digest("hex") };
}

const first = await timed();
let second;
if (twice === "twice") {
  clearTagCache();
  second = await timed();
}
stopParserWorkers();
process.stdout.write(`${JSON.stringify({ first, second })}\n`);
