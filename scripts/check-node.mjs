// Stops early when this Node does not satisfy package.json's `engines` (the README's Node statement is
// tested against the same field). Ranges: `^a.b.c`, `>=a[.b[.c]]`, joined by `||`.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const parts = (text) => text.split(".").map(Number).concat([0, 0, 0]).slice(0, 3);
const compare = (a, b) => a.map((n, i) => n - (b[i] ?? 0)).find((d) => d !== 0) ?? 0;

/** Whether `version` ("20.20.2") satisfies `range` ("^20.18.1 || >=22"). */
export function satisfiesEngines(version, range) {
  const have = parts(version.replace(/^v/, ""));
  return range.split("||").some((alternative) => {
    const caret = /^\^(\d+(?:\.\d+){0,2})$/.exec(alternative.trim());
    if (caret?.[1]) {
      const floor = parts(caret[1]);
      return have[0] === floor[0] && compare(have, floor) >= 0;
    }
    const atLeast = /^>=\s*(\d+(?:\.\d+){0,2})$/.exec(alternative.trim());
    if (atLeast?.[1]) return compare(have, parts(atLeast[1])) >= 0;
    throw new Error(`check-node: cannot read the engines range "${alternative.trim()}"`);
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const engines = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")).engines.node;
  if (!satisfiesEngines(process.version, engines)) {
    console.error(`Node ${process.version} does not satisfy package.json engines "${engines}"; use Node 22 or 24.`);
    process.exit(1);
  }
  console.log(`Node ${process.version} (engines "${engines}")`);
}
