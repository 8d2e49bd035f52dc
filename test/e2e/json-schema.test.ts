import { describe, expect, it } from "vitest";
import { jsonSchemaChecker, type JsonSchema } from "./double/json-schema.js";

/** A small OpenAPI-like document: the checker reads its schemas as GitHub means them. */
function document(): JsonSchema {
  return {
    components: {
      schemas: {
        named: { type: "object", properties: { name: { type: "string" } } },
        dated: { type: "object", properties: { at: { type: "string", format: "date-time" } } },
        label: { type: "string", nullable: true, enum: ["bug", "docs"] },
      },
    },
    paths: {
      both: { schema: { allOf: [{ $ref: "#/components/schemas/named" }, { $ref: "#/components/schemas/dated" }] } },
      overlapping: { schema: { oneOf: [{ type: "string" }, { type: "string", maxLength: 3 }] } },
      referred: { schema: { $ref: "#/components/schemas/named", description: "ignored beside a $ref" } },
      patterned: { schema: { type: "string", pattern: "^(?<!x)\\p{Unknown}$" } },
      labels: { schema: { type: "array", items: { $ref: "#/components/schemas/label" } } },
      open: { schema: { type: "object", properties: { a: { type: "string" } }, additionalProperties: true } },
      closed: { schema: { type: "object", properties: { a: { type: "string" } }, additionalProperties: false } },
    },
  };
}

describe("the double's JSON Schema check", () => {
  const doc = document();
  const paths = doc.paths as Record<string, { schema: JsonSchema }>;
  const check = jsonSchemaChecker(doc);
  const at = (name: string) => (paths[name] as { schema: JsonSchema }).schema;

  it("takes the properties of every allOf part as declared, and reports one no part declares", () => {
    expect(check(at("both"), { name: "n", at: "2026-01-01T00:00:00Z" })).toEqual([]);
    expect(check(at("both"), { name: "n", extra: 1 })).toEqual(["body.extra: not a documented property"]);
  });

  it("still reads a component strictly where it stands alone", () => {
    expect(check(at("referred"), { name: "n", at: "x" })).toEqual(["body.at: not a documented property"]);
  });

  it("accepts a value more than one oneOf branch fits, and names each branch a value fits none of", () => {
    expect(check(at("overlapping"), "ab")).toEqual([]);
    expect(check(at("overlapping"), 5)).toEqual([
      "body: matches none of the anyOf alternatives (body: expected string, got number | body: expected string, got number)",
    ]);
  });

  it("reads nullable, leaves format unchecked, and skips a pattern JavaScript cannot compile", () => {
    expect(check(at("labels"), ["bug", null])).toEqual([]);
    expect(check(at("labels"), ["feature"])).toEqual(['body[0]: "feature" is not one of ["bug","docs",null]']);
    expect(check(at("both"), { at: "not a date" })).toEqual([]);
    expect(check(at("patterned"), "anything")).toEqual([]);
  });

  it("follows additionalProperties when the schema says it", () => {
    expect(check(at("open"), { a: "x", b: 1 })).toEqual([]);
    expect(check(at("closed"), { a: "x", b: 1 })).toEqual(["body.b: not allowed (additionalProperties: false)"]);
  });

  it("checks standalone schemas without a document", () => {
    expect(
      jsonSchemaChecker()({ type: "object", properties: { n: { type: "integer", minimum: 1 } } }, { n: 0 }, "config"),
    ).toEqual(["config.n: must be >= 1"]);
  });
});
