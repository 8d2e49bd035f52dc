import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it, vi, type MockInstance } from "vitest";
import fc from "fast-check";
import { stringify as toYaml } from "yaml";
import {
  REPO_CONFIG_PATH,
  parseRepoConfig,
  repoConfigSchema,
  type RepoConfigRead,
} from "../../src/config/repo-config.js";
import { PERMISSION_LEVELS } from "../../src/github/permission.js";
import { PATIENCE_MS } from "../helpers/patience.js";

const RUNS = 2000;
const KNOWN_KEYS = Object.keys(repoConfigSchema.shape);

/** Every read either gives a config the schema accepts or a message that names the file. */
function expectWellFormed(read: RepoConfigRead): void {
  if (read.ok) {
    expect(repoConfigSchema.safeParse(read.config).success).toBe(true);
  } else {
    expect(read.message).toContain(REPO_CONFIG_PATH);
    expect(read.message.length).toBeGreaterThan(REPO_CONFIG_PATH.length + 10);
  }
}

// ---- generators -------------------------------------------------------------------------------

/** Pieces of YAML syntax, glued at random: the generator reaches the parser's odd corners quickly. */
const YAML_PIECES = [
  "\n",
  "\n  ",
  "\n    ",
  "\t",
  " ",
  ": ",
  ":",
  "- ",
  "-",
  "? ",
  "---",
  "...",
  "#",
  "# note",
  "%YAML 1.2\n",
  "%TAG ! tag:x,2024:\n",
  "&a ",
  "*a",
  "&b ",
  "*b",
  "<<: *a",
  "!!str ",
  "!!int ",
  "!!map ",
  "!!binary ",
  "!custom ",
  "!",
  "[",
  "]",
  "{",
  "}",
  ",",
  "'",
  '"',
  "|",
  ">",
  "|-",
  "\\",
  "\\u0000",
  "~",
  "null",
  "true",
  "yes",
  "1",
  "-1",
  "0x1F",
  "1e3",
  ".inf",
  ".nan",
  "2024-01-01",
  "é",
  "😀",
  "\u2028",
  "\ufeff",
  ...KNOWN_KEYS,
  "limits:\n  max_iterations: ",
  "commit_author:\n  name: ",
  "unknown_key",
];
const yamlSoup = fc.string({ unit: fc.constantFrom(...YAML_PIECES), maxLength: 50 });

const scalar = fc.oneof(
  fc.string({ maxLength: 20 }),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.constantFrom(...PERMISSION_LEVELS, "any-comment", "command-only", "blueprint/", "a..b", "ok@example.com"),
);
/** Objects whose keys are mostly the config's own, with values of any type, nested a little. */
const configLike = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    scalar,
    fc.array(tie("value"), { maxLength: 3 }),
    tie("object"),
  ),
  object: fc.dictionary(
    fc.oneof(
      fc.constantFrom(...KNOWN_KEYS, "max_iterations", "max_minutes", "max_tokens", "name", "email"),
      fc.string({ maxLength: 8 }),
    ),
    tie("value"),
    {
      maxKeys: 5,
    },
  ),
})).object;

/** A configuration the schema must accept, with the values it must come back with. */
const validConfig = fc.record(
  {
    model: fc.string({ minLength: 1, maxLength: 30 }),
    min_permission: fc.constantFrom(...PERMISSION_LEVELS),
    require_other_approver: fc.boolean(),
    approvers: fc.constantFrom("write", "codeowners"),
    feedback: fc.constantFrom("any-comment", "command-only"),
    setup: fc.string({ minLength: 1, maxLength: 30 }),
    test: fc.string({ minLength: 1, maxLength: 30 }),
    branch_prefix: fc.stringMatching(/^[A-Za-z0-9_/-]{1,20}$/),
    limits: fc.record(
      {
        max_iterations: fc.integer({ min: 1, max: 500 }),
        max_minutes: fc.integer({ min: 1, max: 240 }),
        max_tokens: fc.integer({ min: 1, max: 10_000_000 }),
      },
      { requiredKeys: [] },
    ),
    instructions: fc.string({ maxLength: 200 }),
  },
  { requiredKeys: [] },
);

// ---- properties -------------------------------------------------------------------------------

// The YAML library reports unknown tags through process.emitWarning; caught here so the run stays
// readable, and asserted on below.
let warnings: MockInstance<typeof process.emitWarning>;
beforeEach(() => {
  warnings = vi.spyOn(process, "emitWarning").mockImplementation(() => undefined);
});
afterEach(() => {
  warnings.mockRestore();
});

describe("parseRepoConfig on arbitrary input", () => {
  it("never throws on arbitrary text, and names the file in every complaint", () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.string({ unit: "binary", maxLength: 200 }), fc.string({ maxLength: 200 }), yamlSoup),
        (text) => {
          expectWellFormed(parseRepoConfig(text));
        },
      ),
      { numRuns: RUNS },
    );
  });

  it("never throws on YAML documents with random keys and values", () => {
    fc.assert(
      fc.property(fc.oneof(configLike, fc.jsonValue({ maxDepth: 4 })), fc.boolean(), (value, flow) => {
        const text = toYaml(value, flow ? { collectionStyle: "flow" } : {});
        expectWellFormed(parseRepoConfig(text));
      }),
      { numRuns: RUNS },
    );
  });

  it("reports unknown keys by name", () => {
    const unknownKey = fc.stringMatching(/^[a-z][a-z_]{0,15}$/).filter((key) => !KNOWN_KEYS.includes(key));
    fc.assert(
      fc.property(unknownKey, (key) => {
        const read = parseRepoConfig(`model: gpt-x\n${key}: 1\n`);
        expect(read.ok).toBe(false);
        if (!read.ok) expect(read.message).toContain(key);
      }),
      { numRuns: 500 },
    );
  });

  it("survives anchors, aliases and alias bombs quickly", () => {
    const aliasBomb = fc.integer({ min: 3, max: 9 }).map((levels) => {
      const lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]'];
      for (let level = 1; level <= levels; level++)
        lines.push(
          `a${level}: &a${level} [${Array(9)
            .fill(`*a${level - 1}`)
            .join(", ")}]`,
        );
      return lines.join("\n");
    });
    const reuse = fc
      .tuple(fc.constantFrom("model", "setup", "test", "limits", "commit_author"), yamlSoup)
      .map(([key, soup]) => `base: &base\n  ${key}: x\n${key}: *base\nother: *base\n<<: *base\n${soup}`);
    fc.assert(
      fc.property(fc.oneof(aliasBomb, reuse), (text) => {
        // An alias bomb that expands runs into the test's time limit: no timed assertion here.
        expectWellFormed(parseRepoConfig(text));
      }),
      { numRuns: 300 },
    );
  });

  it("survives huge values, keys and tags (about 1 MB)", () => {
    const huge = fc
      .tuple(
        fc.constantFrom("model: ", "instructions: ", "branch_prefix: ", "x", "model: !", "model: '", "# ", "- ", "? "),
        fc.constantFrom("a", "!", " ", "é", "😀", "\\"),
        fc.integer({ min: 1_000_000, max: 1_100_000 }),
      )
      .map(([head, chunk, size]) => head + chunk.repeat(Math.ceil(size / chunk.length)));
    fc.assert(
      fc.property(huge, (text) => {
        expectWellFormed(parseRepoConfig(text));
      }),
      { numRuns: 20 },
    );
  });

  it("never writes a repository's text to the server's log as a warning", () => {
    fc.assert(
      fc.property(
        fc.constantFrom("!custom", "!x", "!!python/object", "!<tag:x>"),
        fc.string({ maxLength: 20 }),
        (tag, value) => {
          warnings.mockClear();
          expectWellFormed(parseRepoConfig(`model: ${tag} ${JSON.stringify(value)}\n`));
          expect(warnings).not.toHaveBeenCalled();
        },
      ),
      { numRuns: 50 },
    );
  });

  it("keeps deep nesting from crashing the process, however often it is read", () => {
    // The crash this guards against aborts V8 (it cannot be caught), so the reads run in a child process.
    const module = fileURLToPath(new URL("../../src/config/repo-config.ts", import.meta.url));
    const script = `
      const { parseRepoConfig } = await import(${JSON.stringify(module)});
      for (const depth of [1000, 5000]) {
        for (const text of ["[".repeat(depth) + "]".repeat(depth), "a: ".concat("{b: ".repeat(depth), "1", "}".repeat(depth))]) {
          for (let attempt = 0; attempt < 2; attempt++) {
            const read = parseRepoConfig(text);
            console.log(JSON.stringify({ depth, ok: read.ok, message: read.ok ? "" : read.message.slice(0, 200) }));
          }
        }
      }`;
    const child = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
      cwd: fileURLToPath(new URL("../..", import.meta.url)),
      encoding: "utf8",
      timeout: PATIENCE_MS,
    });
    const why = child.stderr.split("\n").find((line) => /FATAL|Error/.test(line)) ?? child.stderr.slice(0, 300);
    expect(child.signal, why).toBeNull();
    expect(child.status, why).toBe(0);
    const reads = child.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { ok: boolean; message: string });
    expect(reads).toHaveLength(8);
    for (const read of reads) {
      expect(read.ok).toBe(false);
      expect(read.message).toContain(REPO_CONFIG_PATH);
    }
  });
});

describe("parseRepoConfig on valid configurations", () => {
  it("reads back every value of a valid configuration, whatever the YAML style", () => {
    fc.assert(
      fc.property(validConfig, fc.constantFrom("block", "flow"), (config, style) => {
        const read = parseRepoConfig(toYaml(config, style === "flow" ? { collectionStyle: "flow" } : {}));
        expect(read.ok, read.ok ? "" : read.message).toBe(true);
        if (read.ok) expect(read.config).toMatchObject(config);
      }),
      { numRuns: RUNS },
    );
  });
});
