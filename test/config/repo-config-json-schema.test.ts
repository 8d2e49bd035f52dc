import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import {
  REPO_CONFIG_JSON_SCHEMA_PATH,
  repoConfigJsonSchema,
  repoConfigJsonSchemaText,
} from "../../src/config/repo-config-json-schema.js";
import { parseRepoConfig } from "../../src/config/repo-config.js";
import { jsonSchemaChecker } from "../e2e/double/json-schema.js";

const committed = readFileSync(new URL(`../../${REPO_CONFIG_JSON_SCHEMA_PATH}`, import.meta.url), "utf8");
/** Standalone: a $ref would fail to compile. */
const validateJson = (schema: object, value: unknown, at: string) =>
  jsonSchemaChecker()(schema as Record<string, unknown>, value, at);

/** The example configuration in a page of the docs, the way people copy it. */
function exampleIn(page: string): string {
  const text = readFileSync(new URL(`../../${page}`, import.meta.url), "utf8");
  const block = /```yaml\n(# yaml-language-server: \$schema=[^\n]+\n[\s\S]*?)```/.exec(text)?.[1];
  if (!block) throw new Error(`${page} has no blueprint.yml example with a schema line`);
  return block;
}

/** The README shows the most used keys; docs/configuration.md the full reference. */
const EXAMPLES = ["README.md", "docs/configuration.md"];

describe("the committed JSON Schema of .github/blueprint.yml", () => {
  it("is what the zod schema generates now (run `npm run schema` after changing the config)", () => {
    expect(committed).toBe(repoConfigJsonSchemaText());
  });

  it("describes every field the zod schema knows, and no others", () => {
    const properties = Object.keys((repoConfigJsonSchema().properties ?? {}) as object);
    expect(properties).toContain("approvers");
    expect(properties.sort()).toEqual(Object.keys(JSON.parse(committed).properties).sort());
  });

  it.each(EXAMPLES)(
    "accepts %s's example, as the zod schema does, and the example points editors at the committed file",
    (page) => {
      const example = exampleIn(page);
      expect(example.split("\n")[0]).toMatch(
        new RegExp(`\\$schema=\\S+/${REPO_CONFIG_JSON_SCHEMA_PATH.replace(".", "\\.")}$`),
      );
      expect(parseRepoConfig(example).ok).toBe(true);
      expect(validateJson(JSON.parse(committed), parseYaml(example), "config")).toEqual([]);
    },
  );

  it("is shown whole in docs/configuration.md: its example sets every key, and its table describes every key", () => {
    const keys = Object.keys(JSON.parse(committed).properties as object).sort();
    expect(Object.keys(parseYaml(exampleIn("docs/configuration.md")) as object).sort()).toEqual(keys);
    const page = readFileSync(new URL("../../docs/configuration.md", import.meta.url), "utf8");
    for (const key of keys) expect(page, key).toContain(`| \`${key}\` |`);
  });

  it("rejects what the zod schema rejects: an unknown key, a wrong enum value", () => {
    const schema = JSON.parse(committed);
    expect(validateJson(schema, { modle: "gpt-4.1" }, "config").join(" ")).toContain("modle");
    expect(validateJson(schema, { approvers: "admins" }, "config")).not.toEqual([]);
  });
});
