import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { COMMAND_NAMES, parseComment, type ParsedComment } from "../../src/github/command.js";

const RUNS = 2000;
const KINDS = ["command", "invalid", "typo", "none"];

/** Pieces that make comments interesting to a line-based parser. */
const FRAGMENTS = [
  "/",
  " ",
  "  ",
  "\t",
  "\n",
  "\r\n",
  "\r",
  "\u00a0",
  "\u2028",
  "\u3000",
  ",",
  "-",
  "--",
  "`",
  "plan",
  "PLAN",
  "build",
  "Build",
  "revise",
  "cancel",
  "status",
  "help",
  "bulid",
  "pln",
  "S1",
  "s2",
  "S999",
  "S1000",
  "v2",
  "V10",
  "--fresh",
  "--FORCE",
  "--",
  "é",
  "😀",
  "ß",
  "İ",
  "\u0000",
];

const fragmentText = fc.string({ unit: fc.constantFrom(...FRAGMENTS), maxLength: 40 });
const anyText = fc.oneof(
  fc.string({ unit: "binary", maxLength: 200 }),
  fc.string({ unit: "grapheme", maxLength: 200 }),
  fragmentText,
);
const slashText = fc
  .tuple(fc.constantFrom("", "\n", "  \r\n", " \t"), anyText)
  .map(([lead, rest]) => `${lead}/${rest}`);
/** Single-line text: no \n or \r (the parser's own line breaks), with Unicode separators and spaces mixed in. */
const oneLineUnit = fc.oneof(
  fc.string({ unit: "binary", minLength: 1, maxLength: 1 }),
  fc.constantFrom("a", " ", "\t", "\u00a0", "\u0085", "\u2028", "\u2029", "\u3000", "\ufeff"),
);
const oneLineText = fc
  .string({ unit: oneLineUnit, minLength: 1, maxLength: 40 })
  .map((text) => text.replace(/[\r\n]/g, " "));

/** Shows invisible and non-ASCII characters as \u{…}, so a failure message says what the input was. */
const visible = (text: string) =>
  text.replace(/[^\x20-\x7e]/gu, (char) => `\\u{${(char.codePointAt(0) ?? 0).toString(16)}}`);

/** The invariants every parse result must keep, whatever came in. */
function expectWellFormed(result: ParsedComment): void {
  expect(KINDS).toContain(result.kind);
  if (result.kind === "invalid") {
    expect(COMMAND_NAMES).toContain(result.name);
    expect(typeof result.message).toBe("string");
    expect(result.message.trim().length).toBeGreaterThan(0);
  }
  if (result.kind === "typo") {
    expect(COMMAND_NAMES).toContain(result.suggestion);
    expect(COMMAND_NAMES).not.toContain(result.word);
  }
  if (result.kind === "command") expect(COMMAND_NAMES).toContain(result.command.name);
}

/** Flips the case of some letters, as a person typing /Build or /BUILD would. */
const randomCase = (text: string) =>
  fc
    .array(fc.boolean(), { minLength: text.length, maxLength: text.length })
    .map((upper) => [...text].map((char, index) => (upper[index] ? char.toUpperCase() : char.toLowerCase())).join(""));

describe("parseComment on arbitrary input", () => {
  it("never throws and always returns a well-formed result", () => {
    fc.assert(
      fc.property(fc.oneof(anyText, slashText), (body) => {
        expectWellFormed(parseComment(body));
      }),
      { numRuns: RUNS },
    );
  });

  it("treats null, undefined and blank bodies as no command", () => {
    expect(parseComment(null)).toEqual({ kind: "none" });
    expect(parseComment(undefined)).toEqual({ kind: "none" });
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom(" ", "\t", "\n", "\r\n", "\r") }), (blank) => {
        expect(parseComment(blank)).toEqual({ kind: "none" });
      }),
      { numRuns: 500 },
    );
  });

  it("ignores text whose first non-blank line does not start with /", () => {
    fc.assert(
      fc.property(anyText, (body) => {
        const first = body
          .replace(/\r\n?/g, "\n")
          .split("\n")
          .find((line) => line.trim() !== "");
        fc.pre(first !== undefined && !first.trim().startsWith("/"));
        expect(parseComment(body)).toEqual({ kind: "none" });
      }),
      { numRuns: RUNS },
    );
  });

  it("survives huge comments (> 65,536 characters)", () => {
    const huge = fc
      .tuple(
        fc.constantFrom("/plan ", "/build ", "/revise ", "/bulid ", "", "/"),
        fragmentText,
        fc.integer({ min: 65_537, max: 200_000 }),
      )
      .map(([head, chunk, size]) =>
        (head + (chunk || "x").repeat(Math.ceil(size / Math.max(chunk.length, 1)))).slice(0, size),
      );
    fc.assert(
      fc.property(huge, (body) => {
        expect(body.length).toBeGreaterThan(65_536);
        const result = parseComment(body);
        expectWellFormed(result);
        if (result.kind === "command" && result.command.name === "plan")
          expect(result.command.instructions.length).toBeLessThanOrEqual(65_536);
      }),
      { numRuns: 60 },
    );
  });

  it("parses a long comment in linear time, whatever whitespace and line separators it holds", () => {
    // A run of whitespace after the command word followed by a U+2028/U+2029 on the same line.
    // The parts, not the 20,000-character body, are what a failure reports.
    fc.assert(
      fc.property(
        fc.constantFrom("/plan", "/build", "/revise", "/x"),
        fc.constantFrom(" ", "\t", "\u00a0", "\u3000"),
        fc.integer({ min: 20_000, max: 30_000 }),
        fc.constantFrom("\u2028", "\u2029"),
        (head, space, count, separator) => {
          const body = `${head}${space.repeat(count)}y${separator}z`;
          // A parse that is not linear runs into the test's time limit: no timed assertion here.
          expectWellFormed(parseComment(body));
        },
      ),
      { numRuns: 5, endOnFailure: true },
    );
  });
});

describe("parseComment on generated commands", () => {
  const buildToken = fc.oneof(
    fc.integer({ min: 0, max: 999 }).map((n) => ({ kind: "step" as const, text: `S${n}` })),
    fc.integer({ min: 0, max: 9999 }).map((n) => ({ kind: "revision" as const, text: `v${n}` })),
    fc.constant({ kind: "fresh" as const, text: "--fresh" }),
    fc.constant({ kind: "force" as const, text: "--force" }),
  );
  const separator = fc.constantFrom(" ", "  ", ",", ", ", "\t", " ,");

  it("recovers the parts of /build from any order, case and separators", () => {
    const buildLine = fc
      .tuple(
        fc.array(fc.tuple(buildToken, separator), { maxLength: 8 }),
        fc.constantFrom("", "\n", " \r\n\r\n"),
        fc.constantFrom("", "  "),
      )
      .chain(([tokens, leading, indent]) => {
        const line = `/build${tokens.map(([token, sep], index) => (index === 0 ? " " : sep) + token.text).join("")}`;
        return randomCase(line).map((cased) => ({
          tokens: tokens.map(([token]) => token),
          body: `${leading}${indent}${cased}`,
        }));
      });
    fc.assert(
      fc.property(buildLine, fc.constantFrom("", "\n", "\r\n\r\n"), ({ tokens, body }, trailer) => {
        const steps = [
          ...new Set(tokens.filter((token) => token.kind === "step").map((token) => token.text.toUpperCase())),
        ];
        const revisions = tokens
          .filter((token) => token.kind === "revision")
          .map((token) => Number(token.text.slice(1)));
        expect(parseComment(body + trailer)).toEqual({
          kind: "command",
          command: {
            name: "build",
            steps,
            fresh: tokens.some((token) => token.kind === "fresh"),
            force: tokens.some((token) => token.kind === "force"),
            revision: revisions.at(-1) ?? null,
            notes: "",
          },
        });
      }),
      { numRuns: RUNS },
    );
  });

  it("reports an unknown /build flag as invalid, naming it, so a mistyped flag never becomes a note", () => {
    const badFlag = fc
      .tuple(
        fc.constantFrom("-", "--"),
        fc.string({ unit: fc.constantFrom("a", "z", "F", "1", "-", "é", "😀", "_", "."), minLength: 1, maxLength: 12 }),
      )
      .map(([dashes, rest]) => `${dashes}${rest}`)
      .filter((token) => /^--?[a-z]/i.test(token) && !/^(--fresh|--force)$/i.test(token));
    fc.assert(
      fc.property(badFlag, (token) => {
        const result = parseComment(`/build S1 ${token}`);
        expect(result).toMatchObject({ kind: "invalid", name: "build" });
        if (result.kind === "invalid") expect(result.message).toContain(token.slice(0, 40));
      }),
      { numRuns: RUNS },
    );
  });

  it("keeps the text after the ids and flags, and the lines after the command, as the build's notes", () => {
    const word = fc
      .stringMatching(/^[A-Za-z][A-Za-z0-9.'()é]{0,9}$/)
      .filter((token) => !/^(s\d{1,3}|v\d{1,4})$/i.test(token));
    const moreWords = fc.array(fc.stringMatching(/^[A-Za-z0-9.,'()é-]{1,10}$/), { maxLength: 5 });
    fc.assert(
      fc.property(
        fc.constantFrom("", " S2", " s1 S3 --fresh", " v2"),
        word,
        moreWords,
        fc.constantFrom("", "\nSecond line.", "\r\n\r\nAnd a paragraph."),
        (head, first, more, after) => {
          const note = [first, ...more].join(" ");
          const result = parseComment(`/build${head} ${note}${after}`);
          expect(result.kind).toBe("command");
          if (result.kind === "command" && result.command.name === "build") {
            expect(result.command.notes).toBe([note, after.replace(/\r\n/g, "\n").trim()].filter(Boolean).join("\n"));
          }
        },
      ),
      { numRuns: RUNS },
    );
  });

  it("keeps /plan instructions: the rest of the first line, then the lines after it, CRLF normalised", () => {
    const words = fc
      .array(fc.stringMatching(/^[A-Za-z0-9.,'()é-]{1,10}$/), { minLength: 1, maxLength: 6 })
      .map((parts) => parts.join(" "));
    fc.assert(
      fc.property(
        fc.constantFrom("plan", "PLAN", "Plan", "pLaN"),
        fc.option(words, { nil: "" }),
        fc.array(fc.option(words, { nil: "" }), { maxLength: 4 }),
        fc.constantFrom("\n", "\r\n"),
        (word, inline, laterLines, newline) => {
          const body = [`/${word}${inline ? ` ${inline}` : ""}`, ...laterLines].join(newline);
          const rest = laterLines.join("\n").trim();
          expect(parseComment(body)).toEqual({
            kind: "command",
            command: { name: "plan", instructions: [inline, rest].filter(Boolean).join("\n") },
          });
        },
      ),
      { numRuns: RUNS },
    );
  });

  it("recognises a command word followed by any single-line argument", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...COMMAND_NAMES.filter((name) => name !== "build")),
        oneLineText,
        (name, argument) => {
          const body = `/${name} ${argument}`;
          const result = parseComment(body);
          if (name === "revise" && argument.trim() === "") expect(result.kind, visible(body)).toBe("invalid");
          else expect(result, visible(body)).toMatchObject({ kind: "command", command: { name } });
        },
      ),
      { numRuns: RUNS },
    );
  });

  it("requires feedback for /revise and keeps it when given", () => {
    fc.assert(
      fc.property(
        fc.constantFrom("revise", "REVISE", "Revise"),
        fc.constantFrom("", " ", "\n", "\r\n  \r\n"),
        (word, blank) => {
          const result = parseComment(`/${word}${blank}`);
          expect(result).toMatchObject({ kind: "invalid", name: "revise" });
        },
      ),
      { numRuns: 100 },
    );
    fc.assert(
      fc.property(fc.stringMatching(/^[a-z][a-z ]{0,30}[a-z]$/), (feedback) => {
        expect(parseComment(`/revise\n${feedback}`)).toEqual({
          kind: "command",
          command: { name: "revise", feedback },
        });
      }),
      { numRuns: 500 },
    );
  });

  it("is case-insensitive in the command word", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...COMMAND_NAMES).chain((name) => randomCase(name).map((cased) => ({ name, cased }))),
        fc.constantFrom("", " S1 --fresh", " do the thing", "\nmore"),
        ({ name, cased }, tail) => {
          expect(parseComment(`/${cased}${tail}`)).toEqual(parseComment(`/${name}${tail}`));
          expect(parseComment(`/${cased}${tail}`).kind).not.toBe("none");
        },
      ),
      { numRuns: RUNS },
    );
  });

  it("answers a one-letter slip in a command word with a typo hint, never with none", () => {
    const letter = fc.constantFrom(..."abcdefghijklmnopqrstuvwxyz");
    const slip = fc.constantFrom(...COMMAND_NAMES).chain((name) =>
      fc.oneof(
        fc.tuple(fc.nat(name.length - 1), letter).map(([at, char]) => name.slice(0, at) + char + name.slice(at + 1)),
        fc.nat(name.length - 1).map((at) => name.slice(0, at) + name.slice(at + 1)),
        fc.tuple(fc.nat(name.length), letter).map(([at, char]) => name.slice(0, at) + char + name.slice(at)),
        fc
          .nat(name.length - 2)
          .map((at) => name.slice(0, at) + name.charAt(at + 1) + name.charAt(at) + name.slice(at + 2)),
      ),
    );
    fc.assert(
      fc.property(slip, fc.constantFrom("", " please"), (word, tail) => {
        const result = parseComment(`/${word}${tail}`);
        if ((COMMAND_NAMES as readonly string[]).includes(word)) expect(result.kind).not.toBe("none");
        else expect(result).toMatchObject({ kind: "typo", word });
      }),
      { numRuns: RUNS },
    );
  });
});
