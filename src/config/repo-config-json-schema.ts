import { z } from "zod";
import { repoConfigSchema } from "./repo-config.js";

/** Where the generated schema is committed; editors load it from there (see docs/configuration.md). */
export const REPO_CONFIG_JSON_SCHEMA_PATH = "schema/blueprint.schema.json";

/**
 * `.github/blueprint.yml` as JSON Schema, for editors' completion and checks. Generated from the zod
 * schema (as people write the file: `io: "input"`, so fields with defaults are optional), never edited by hand.
 */
export function repoConfigJsonSchema(): Record<string, unknown> {
  return {
    ...z.toJSONSchema(repoConfigSchema, { io: "input" }),
    title: "Blueprint repository configuration (.github/blueprint.yml)",
  };
}

/** The committed file's exact text: two-space JSON with a final newline. */
export function repoConfigJsonSchemaText(): string {
  return `${JSON.stringify(repoConfigJsonSchema(), null, 2)}\n`;
}
