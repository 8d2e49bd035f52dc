import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll } from "vitest";
import { tempDir } from "../helpers/git-repo.js";
import { startPackageRegistry, type PackageRegistry, type PublishedVersion } from "../helpers/registry-double.js";

/** A smoke task about a tiny package made up here: its two published versions, and what the suite folder holds. */
export interface FixtureTask {
  id: string;
  package: string;
  from: string;
  to: string;
  earlier: Record<string, string>;
  later: Record<string, string>;
  changedFiles: string[];
  /** check/'s own files. */
  check: Record<string, string>;
  command: string[];
  /** Test files of the later version the check takes (source "upstream"). */
  upstream?: string[];
  issue: string;
}

/**
 * A task whose id is `<package>-<later version>`, as in the real suite; its check runs check/check.cjs unless it says
 * otherwise.
 */
function fixtureTask(
  name: string,
  from: string,
  to: string,
  task: Omit<FixtureTask, "id" | "package" | "from" | "to" | "command"> & { command?: string[] },
): FixtureTask {
  return { id: `${name}-${to}`, package: name, from, to, command: ["node", ".eval-check/check.cjs"], ...task };
}

const MIT = "MIT License\n\nCopyright (c) the tiny package's author\n";
const assertHeader = "'use strict'\nconst assert = require('node:assert')\n";

/**
 * Five tiny packages in the roles of the real suite's (bytes, camelcase, encodeurl, ms, statuses), so the
 * harness tests run the smoke suite's whole path offline: the registry double serves them, the harness
 * fetches, caches and unpacks them, and the gold patch is their diff.
 */
export const FIXTURE_TASKS: FixtureTask[] = [
  fixtureTask("tiny-bytes", "1.0.0", "1.0.1", {
    earlier: {
      LICENSE: MIT,
      "Readme.md": "# Bytes utility\n\nFormats a number of bytes: `bytes(2048)` is `'2kb'`.\n",
      "index.js": "'use strict'\n\nmodule.exports = function bytes (n) {\n  return Math.floor(n / 1024) + 'kb'\n}\n",
    },
    later: {
      LICENSE: MIT,
      "Readme.md": "# Bytes utility\n\nFormats a number of bytes: `bytes(1536)` is `'1.5kb'`.\n",
      "index.js":
        "'use strict'\n\nmodule.exports = function bytes (n) {\n  return String(Math.round(n / 102.4) / 10) + 'kb'\n}\n",
    },
    changedFiles: ["index.js"],
    check: {
      "check.cjs": `${assertHeader}const bytes = require('..')\nassert.strictEqual(bytes(1536), '1.5kb')\nassert.strictEqual(bytes(2048), '2kb')\n`,
    },
    issue:
      "bytes() drops the fractional part\n\n`bytes(1536)` returns `'1kb'`; I expected `'1.5kb'`, as the readme's examples suggest for sizes between two units.",
  }),
  fixtureTask("tiny-camelcase", "2.0.0", "2.1.0", {
    earlier: {
      license: MIT,
      "index.js":
        "'use strict'\n\nmodule.exports = function camelCase (input) {\n  return input.replace(/[-_\\s]+(.)/g, (_, c) => c.toUpperCase())\n}\n",
      "index.d.ts": "declare function camelCase(input: string): string;\nexport = camelCase;\n",
    },
    later: {
      license: MIT,
      "index.js":
        "'use strict'\n\nmodule.exports = function camelCase (input, options = {}) {\n  const camel = input.replace(/[-_\\s]+(.)/g, (_, c) => c.toUpperCase())\n  return options.pascalCase ? camel.charAt(0).toUpperCase() + camel.slice(1) : camel\n}\n",
      "index.d.ts":
        "declare function camelCase(input: string, options?: { pascalCase?: boolean }): string;\nexport = camelCase;\n",
      "test/options.js": `${assertHeader}const camelCase = require('..')\nassert.strictEqual(camelCase('foo-bar', { pascalCase: true }), 'FooBar')\nassert.strictEqual(camelCase('foo-bar'), 'fooBar')\n`,
    },
    changedFiles: ["index.js", "index.d.ts"],
    check: {},
    command: ["node", ".eval-check/options.js"],
    upstream: ["test/options.js"],
    issue:
      "camelCase cannot make PascalCase\n\nI need `FooBar` from `foo-bar`, but nothing gives an upper-case first letter. Could it take `{ pascalCase: true }`, typed too?",
  }),
  fixtureTask("tiny-encodeurl", "1.0.0", "1.0.1", {
    earlier: {
      LICENSE: MIT,
      "README.md": "# tiny-encodeurl\n\nEncodes the stray `%` signs of a URL.\n",
      "HISTORY.md": "1.0.0\n  * first release\n",
      "index.js":
        "'use strict'\n\nmodule.exports = function encodeUrl (url) {\n  return String(url).replace(/%(?![0-9A-Fa-f]{2}|$)/g, '%25')\n}\n",
    },
    later: {
      LICENSE: MIT,
      "README.md": "# tiny-encodeurl\n\nEncodes the stray `%` signs of a URL, the last one too.\n",
      "HISTORY.md": "1.0.1\n  * Fix encoding `%` as last character\n\n1.0.0\n  * first release\n",
      "index.js":
        "'use strict'\n\nmodule.exports = function encodeUrl (url) {\n  return String(url).replace(/%(?![0-9A-Fa-f]{2})/g, '%25')\n}\n",
    },
    changedFiles: ["index.js"],
    check: {
      "check.cjs": `${assertHeader}const encodeUrl = require('..')\nassert.strictEqual(encodeUrl('/a%'), '/a%25')\nassert.strictEqual(encodeUrl('/a%zz'), '/a%25zz')\nassert.strictEqual(encodeUrl('/a%20b'), '/a%20b')\n`,
    },
    issue:
      "A lone `%` at the end of a URL is left as it is\n\n`encodeUrl('/a%zz')` gives `'/a%25zz'`, good, but `encodeUrl('/a%')` gives `'/a%'` where I expected `'/a%25'`.",
  }),
  fixtureTask("tiny-ms", "1.0.0", "1.0.1", {
    earlier: {
      "license.md": MIT,
      "index.js":
        "'use strict'\n\nmodule.exports = function ms (n) {\n  if (typeof n !== 'number') throw new Error('ms needs a number')\n  return n + 'ms'\n}\n",
    },
    later: {
      "license.md": MIT,
      "index.js":
        "'use strict'\n\nmodule.exports = function ms (n) {\n  if (typeof n !== 'number' || !isFinite(n)) throw new Error('ms needs a finite number')\n  return n + 'ms'\n}\n",
    },
    changedFiles: ["index.js"],
    check: {
      "check.cjs": `${assertHeader}const ms = require('..')\nassert.throws(() => ms(Infinity))\nassert.strictEqual(ms(5), '5ms')\n`,
    },
    issue:
      "ms(Infinity) returns 'Infinityms'\n\nBad input throws, except `Infinity`: `ms(Infinity)` returns the string `'Infinityms'`. I expected an error.",
  }),
  fixtureTask("tiny-statuses", "1.0.0", "1.1.0", {
    earlier: {
      LICENSE: MIT,
      "codes.json": '{\n  "200": "OK",\n  "404": "Not Found"\n}\n',
      "index.js": "'use strict'\n\nmodule.exports = require('./codes.json')\n",
    },
    later: {
      LICENSE: MIT,
      "codes.json": '{\n  "103": "Early Hints",\n  "200": "OK",\n  "404": "Not Found"\n}\n',
      "index.js": "'use strict'\n\nmodule.exports = require('./codes.json')\n",
    },
    changedFiles: ["codes.json"],
    check: {
      "check.cjs": `${assertHeader}const status = require('..')\nassert.strictEqual(status[103], 'Early Hints')\nassert.strictEqual(status[200], 'OK')\n`,
    },
    issue:
      "103 Early Hints is missing\n\n`require('tiny-statuses')[103]` is undefined; I expected `'Early Hints'`, as for the other codes the package knows.",
  }),
];

export interface SmokeFixture {
  /** A suite folder as eval/suites/smoke is: task.json, issue.md and check/ per task, no package code. */
  smokeDir: string;
  registry: PackageRegistry;
  cacheDir: string;
  /** `--registry URL --cache DIR`, for the eval's argv. */
  args: string[];
  /** A file of the task's earlier or later version, as published. */
  file(taskId: string, version: "earlier" | "later", file: string): string;
  /** The one line the real change replaced, and its replacement: what a model that solves the task would edit. */
  realEdit(taskId: string, file: string): { old_string: string; new_string: string };
  close(): Promise<void>;
}

export async function startSmokeFixture(tasks: FixtureTask[] = FIXTURE_TASKS): Promise<SmokeFixture> {
  const published = new Map<string, PublishedVersion>();
  for (const task of tasks) {
    for (const [version, files] of [
      [task.from, task.earlier],
      [task.to, task.later],
    ] as const) {
      published.set(`${task.package}@${version}`, { name: task.package, version, files });
    }
  }
  const registry = await startPackageRegistry([...published.values()]);
  const smokeDir = tempDir("blueprint-eval-smoke-suite-");
  const cacheDir = tempDir("blueprint-eval-cache-");
  for (const task of tasks) writeTask(smokeDir, task);
  const byId = (id: string) => {
    const task = tasks.find((candidate) => candidate.id === id);
    if (!task) throw new Error(`the fixture has no task ${id}`);
    return task;
  };
  const file = (id: string, version: "earlier" | "later", name: string) => {
    const text = byId(id)[version][name];
    if (text === undefined) throw new Error(`${id}'s ${version} version has no ${name}`);
    return text;
  };
  return {
    smokeDir,
    registry,
    cacheDir,
    args: ["--registry", registry.url, "--cache", cacheDir],
    file,
    realEdit(id, name) {
      const before = file(id, "earlier", name).split("\n");
      const after = file(id, "later", name).split("\n");
      const old_string = before.find((line) => !after.includes(line));
      const new_string = after.find((line) => !before.includes(line));
      if (old_string === undefined || new_string === undefined) throw new Error(`${id}: no one-line change in ${name}`);
      return { old_string, new_string };
    },
    async close() {
      await registry.close();
      for (const dir of [smokeDir, cacheDir]) rmSync(dir, { recursive: true, force: true });
    },
  };
}

export function writeTask(smokeDir: string, task: FixtureTask): void {
  const dir = path.join(smokeDir, task.id);
  mkdirSync(dir, { recursive: true });
  const meta = {
    package: task.package,
    license: "MIT",
    from: task.from,
    to: task.to,
    kind: "bugfix",
    changelog: "(made up for the tests)",
    changedFiles: task.changedFiles,
    check: {
      command: task.command,
      source: task.upstream ? "upstream" : "written",
      ...(task.upstream ? { upstream: task.upstream } : {}),
      note: "Made up for the tests.",
    },
  };
  writeFileSync(path.join(dir, "task.json"), `${JSON.stringify(meta, null, 2)}\n`);
  writeFileSync(path.join(dir, "issue.md"), `${task.issue}\n`);
  for (const [name, text] of Object.entries(task.check)) {
    mkdirSync(path.join(dir, "check"), { recursive: true });
    writeFileSync(path.join(dir, "check", name), text);
  }
}

/** The fixture for one test file: started before its tests, closed after them. */
export function useSmokeFixture(): () => SmokeFixture {
  let fixture: SmokeFixture | null = null;
  beforeAll(async () => {
    fixture = await startSmokeFixture();
  });
  afterAll(async () => {
    await fixture?.close();
  });
  return () => {
    if (!fixture) throw new Error("the smoke fixture starts in beforeAll");
    return fixture;
  };
}
