import { describe, expect, it } from "vitest";
import { ownerLabel, ownersOf, parseCodeOwners } from "../../src/github/codeowners.js";

/** The owners of `path` as GitHub writes them, or null when no line matches it. */
function owners(file: string, path: string): string[] | null {
  return ownersOf(parseCodeOwners(file), path)?.map(ownerLabel) ?? null;
}

// GitHub's own example file ("About code owners"), comments and all.
const GITHUB_EXAMPLE = `
# This is a comment.
# Each line is a file pattern followed by one or more owners.
*       @global-owner1 @global-owner2
*.js    @js-owner #This is an inline comment.
*.go docs@example.com
*.txt @octo-org/octocats
/build/logs/ @doctocat
docs/* docs@example.com
apps/ @octocat
/docs/ @doctocat
/scripts/ @doctocat @octocat
**/logs @octocat
/apps/ @octocat
/apps/github
`;

describe("CODEOWNERS, as GitHub reads it", () => {
  it("gives every file to `*`'s owners unless a later line says otherwise", () => {
    expect(owners(GITHUB_EXAMPLE, "some/deeply/nested/file.rb")).toEqual(["@global-owner1", "@global-owner2"]);
    expect(owners(GITHUB_EXAMPLE, "README.md")).toEqual(["@global-owner1", "@global-owner2"]);
  });

  it("matches an extension at any depth, and strips inline comments", () => {
    expect(owners(GITHUB_EXAMPLE, "src/deep/app.js")).toEqual(["@js-owner"]);
    expect(owners(GITHUB_EXAMPLE, "main.go")).toEqual(["docs@example.com"]);
    expect(owners(GITHUB_EXAMPLE, "notes/a.txt")).toEqual(["@octo-org/octocats"]);
  });

  it("lets the last matching line win", () => {
    // apps/ then /apps/ @octocat then /apps/github with no owners: the last line decides.
    expect(owners(GITHUB_EXAMPLE, "apps/web/index.js")).toEqual(["@octocat"]);
    expect(owners("*.js @js\nsrc/ @src\n", "src/a.js")).toEqual(["@src"]);
    expect(owners("src/ @src\n*.js @js\n", "src/a.js")).toEqual(["@js"]);
  });

  it("treats a line without owners as clearing ownership, which is not the same as no match", () => {
    expect(owners(GITHUB_EXAMPLE, "apps/github/index.js")).toEqual([]);
    expect(owners("/src/ @src\n", "lib/a.js")).toBeNull();
  });

  it("anchors a pattern with a leading or inner slash at the root; a bare name matches at any depth", () => {
    expect(owners("/build/logs/ @doctocat\n", "build/logs/x.log")).toEqual(["@doctocat"]);
    expect(owners("/build/logs/ @doctocat\n", "src/build/logs/x.log")).toBeNull();
    expect(owners("src/util @u\n", "src/util/a.ts")).toEqual(["@u"]);
    expect(owners("src/util @u\n", "lib/src/util/a.ts")).toBeNull();
    expect(owners("apps/ @octocat\n", "deep/down/apps/x.js")).toEqual(["@octocat"]);
    expect(owners("Makefile @make\n", "tools/Makefile")).toEqual(["@make"]);
  });

  it("covers everything inside a directory the pattern names", () => {
    expect(owners("/docs/ @doctocat\n", "docs/guides/deep/a.md")).toEqual(["@doctocat"]);
    expect(owners("/docs @doctocat\n", "docs/guides/a.md")).toEqual(["@doctocat"]);
    expect(owners("/docs/ @doctocat\n", "docs")).toBeNull();
    expect(owners("docs/** @doctocat\n", "docs")).toBeNull();
    expect(owners("**/logs @octocat\n", "deeply/nested/logs/today.log")).toEqual(["@octocat"]);
    expect(owners("**/logs @octocat\n", "logs/today.log")).toEqual(["@octocat"]);
  });

  it("lets `*` match one level only, while `**` crosses directories", () => {
    expect(owners("docs/* @d\n", "docs/getting-started.md")).toEqual(["@d"]);
    expect(owners("docs/* @d\n", "docs/build-app/troubleshooting.md")).toBeNull();
    expect(owners("docs/** @d\n", "docs/build-app/troubleshooting.md")).toEqual(["@d"]);
    expect(owners("src/**/test.ts @t\n", "src/test.ts")).toEqual(["@t"]);
    expect(owners("src/**/test.ts @t\n", "src/a/b/test.ts")).toEqual(["@t"]);
    expect(owners("src/*.ts @t\n", "src/a/b.ts")).toBeNull();
    expect(owners("src/?.ts @t\n", "src/a.ts")).toEqual(["@t"]);
    expect(owners("src/?.ts @t\n", "src/ab.ts")).toBeNull();
  });

  it("takes dots and other characters literally", () => {
    expect(owners("*.md @m\n", "READMEamd")).toBeNull();
    expect(owners("a+b.txt @p\n", "a+b.txt")).toEqual(["@p"]);
    expect(owners("x{a,b}(c) @p\n", "xa")).toBeNull();
    expect(owners("x{a,b}(c) @p\n", "x{a,b}(c)")).toEqual(["@p"]);
  });

  it("is case-sensitive about paths", () => {
    expect(owners("/Docs/ @d\n", "docs/a.md")).toBeNull();
  });

  it("skips, and reports, the lines GitHub rejects", () => {
    const parsed = parseCodeOwners("* @all\n!secret.txt @nobody\n*.[ch] @c\n\\#notes @n\nsrc/ not-an-owner\n");
    expect(parsed.rules.map((rule) => rule.pattern)).toEqual(["*"]);
    expect(parsed.errors.map((error) => error.line)).toEqual([2, 3, 4, 5]);
    expect(owners("* @all\n!secret.txt\n", "secret.txt")).toEqual(["@all"]);
  });

  it("reads users, teams and emails as owners", () => {
    const [rule] = parseCodeOwners("* @Alice @Octo-Org/Core-Team bob@example.com\n").rules;
    expect(rule?.owners).toEqual([
      { kind: "user", login: "Alice" },
      { kind: "team", org: "Octo-Org", slug: "core-team" },
      { kind: "email", email: "bob@example.com" },
    ]);
  });
});
