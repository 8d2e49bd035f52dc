import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { envSchema } from "../../src/config/env.js";

/** The README is the short guide; docs/ holds one page a topic. These keep them navigable and whole. */

const PAGES = [
  "README.md",
  ...readdirSync("docs")
    .filter((name) => name.endsWith(".md"))
    .map((name) => `docs/${name}`),
  "eval/README.md",
];
const read = (file: string) => readFileSync(file, "utf8");

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}_\- ]/gu, "")
    .replace(/ /g, "-");
}

function headingsOf(text: string): string[] {
  let fenced = false;
  const headings: string[] = [];
  for (const line of text.split("\n")) {
    if (line.startsWith("```")) fenced = !fenced;
    else if (!fenced && /^#+ /.test(line)) headings.push(line.replace(/^#+ /, ""));
  }
  return headings;
}

function filesUnder(dir: string, skip: readonly string[]): string[] {
  return readdirSync(dir).flatMap((name) => {
    const file = path.join(dir, name);
    if (skip.includes(file) || name === "node_modules") return [];
    return statSync(file).isDirectory() ? filesUnder(file, skip) : [file];
  });
}

describe("the README", () => {
  const readme = read("README.md");

  it("stays a short guide: at most 400 lines, with a contents list that links every section", () => {
    expect(readme.split("\n").length).toBeLessThanOrEqual(400);
    const sections = headingsOf(readme).filter(
      (heading) => !["Blueprint", "Contents"].includes(heading) && readme.includes(`\n## ${heading}\n`),
    );
    expect(sections.length).toBeGreaterThan(5);
    const contents = readme.slice(
      readme.indexOf("## Contents"),
      readme.indexOf("\n## ", readme.indexOf("## Contents") + 1),
    );
    for (const section of sections) expect(contents, section).toContain(`](#${anchorOf(section)})`);
  });

  it("links every page of docs/", () => {
    for (const page of PAGES.filter((file) => file.startsWith("docs/"))) expect(readme, page).toContain(`](${page})`);
  });
});

describe("the pages' links", () => {
  it.each(PAGES)("%s links only to files and headings that exist in the repository", (page) => {
    const links = [...read(page).matchAll(/\]\(([^)\s]+)\)/g)]
      .map((match) => match[1] ?? "")
      .filter((link) => !/^[a-z]+:/.test(link));
    for (const link of links) {
      const [target = "", anchor] = link.split("#");
      const file = target ? path.join(path.dirname(page), target) : page;
      expect(existsSync(file), `${page}: ${link}`).toBe(true);
      if (anchor && file.endsWith(".md"))
        expect(headingsOf(read(file)).map(anchorOf), `${page}: ${link}`).toContain(anchor);
    }
  });
});

describe("references outside the repository", () => {
  it("names no document that is not in the repository (a spec or style guide kept elsewhere)", () => {
    const outside = new RegExp(["SPEC", "STYLE"].map((name) => `\\b${name}(\\.md\\b| §)`).join("|"));
    const files = [
      "README.md",
      ...["docs", "src", "scripts", "test", "bench", "eval"].flatMap((dir) =>
        filesUnder(dir, ["eval/tasks", "eval/suites", "eval/results"]),
      ),
    ];
    const naming = files.filter((file) => /\.(md|ts|mjs|js|yml)$/.test(file) && outside.test(read(file)));
    expect(naming).toEqual([]);
  });
});

describe("docs/configuration.md", () => {
  const page = read("docs/configuration.md");
  const tableRows = page.split("\n").filter((line) => line.startsWith("| `"));

  it("describes every environment variable Blueprint reads, in its table", () => {
    for (const name of Object.keys(envSchema.shape))
      expect(
        tableRows.some((row) => row.includes(`\`${name}\``)),
        name,
      ).toBe(true);
  });
});
