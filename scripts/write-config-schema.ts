// Writes schema/blueprint.schema.json from the zod schema of .github/blueprint.yml (`npm run schema`).
// test/config/repo-config-json-schema.test.ts fails when the committed file is stale.
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { REPO_CONFIG_JSON_SCHEMA_PATH, repoConfigJsonSchemaText } from "../src/config/repo-config-json-schema.js";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const target = path.join(root, REPO_CONFIG_JSON_SCHEMA_PATH);
mkdirSync(path.dirname(target), { recursive: true });
writeFileSync(target, repoConfigJsonSchemaText());
