// One cold repo_map in a process of its own (no tags cached, no parser workers yet): the repo-map
// bench starts several, so the cold figure is a median rather than one draw of a noisy machine.
// Argument: the repository; budget from BENCH_MAP_BUDGET. Prints one JSON line.
import { createHash } from "node:crypto";
import { buildRepoMap } from "../../lib/tools/repo-map/build-map.js";
import { stopParserWorkers } from "../../lib/tools/repo-map/tag-pool.js";

const [root] = process.argv.slice(2);
const started = performance.now();
const cpu = process.cpuUsage();
const map = await buildRepoMap(root, { tokens: Number(process.env.BENCH_MAP_BUDGET ?? 4096) });
const ms = performance.now() - started;
const { user, system } = process.cpuUsage(cpu);
stopParserWorkers();
process.stdout.write(
  `${JSON.stringify({ ms, cpuMs: (user + system) / 1000, tokens: map.tokens, parsed: map.parsed, sha256: createHash("sha256").update(map.text).digest("hex") })}\n`,
);
