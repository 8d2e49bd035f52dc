/**
 * The subset of JSON Schema (OpenAPI 3.0 flavour) that GitHub's request-body and parameter
 * schemas use: type, nullable, enum, properties, required, additionalProperties, items,
 * oneOf/anyOf/allOf, length, item-count and range limits, pattern. `format` is not checked.
 *
 * Strict by default: a property the schema does not declare is reported, because GitHub
 * ignores unknown fields silently and an app that sends one is usually sending it by mistake.
 */
export type JsonSchema = { [keyword: string]: unknown };

export interface SchemaValidatorOptions {
  /** Resolves a local `$ref` such as `#/components/schemas/app-permissions`. */
  resolveRef: (ref: string) => JsonSchema;
  /** Report properties an object schema does not declare (default true). */
  strict?: boolean;
}

export function validateJson(schema: JsonSchema, value: unknown, options: SchemaValidatorOptions, at = "body"): string[] {
  const problems: string[] = [];
  check(schema, value, at, problems, { resolveRef: options.resolveRef, strict: options.strict ?? true });
  return problems;
}

type Options = Required<SchemaValidatorOptions>;

function check(raw: JsonSchema, value: unknown, at: string, problems: string[], options: Options): void {
  const schema = resolve(raw, options);
  if (value === null) {
    const types = typesOf(schema);
    const nullOk = schema.nullable === true || types?.includes("null") || (Array.isArray(schema.enum) && schema.enum.includes(null));
    const viaBranches = ["oneOf", "anyOf"].some((key) => Array.isArray(schema[key]));
    if (!nullOk && !viaBranches && (types || schema.enum || schema.properties)) {
      problems.push(`${at}: null is not allowed`);
      return;
    }
    if (nullOk) return;
  }

  if (Array.isArray(schema.allOf)) {
    for (const part of schema.allOf as JsonSchema[]) check(part, value, at, problems, { ...options, strict: false });
  }
  for (const key of ["oneOf", "anyOf"] as const) {
    const branches = schema[key];
    if (!Array.isArray(branches)) continue;
    const results = (branches as JsonSchema[]).map((branch) => {
      const found: string[] = [];
      check(branch, value, at, found, options);
      return found;
    });
    // GitHub's oneOf branches overlap in places; one matching branch is enough for a request to be documented.
    if (!results.some((found) => found.length === 0)) {
      problems.push(`${at}: matches none of the ${key} alternatives (${results.map((found) => found[0]).join(" | ")})`);
    }
  }

  const types = typesOf(schema);
  if (types && !types.some((type) => hasType(value, type))) {
    problems.push(`${at}: expected ${types.join(" or ")}, got ${describe(value)}`);
    return;
  }
  if (Array.isArray(schema.enum) && !schema.enum.some((allowed) => allowed === value)) {
    problems.push(`${at}: ${JSON.stringify(value)} is not one of ${JSON.stringify(schema.enum)}`);
  }
  if (typeof value === "string") checkString(schema, value, at, problems);
  if (typeof value === "number") checkNumber(schema, value, at, problems);
  if (Array.isArray(value)) checkArray(schema, value, at, problems, options);
  else if (isObject(value)) checkObject(schema, value, at, problems, options);
}

function checkString(schema: JsonSchema, value: string, at: string, problems: string[]): void {
  if (typeof schema.maxLength === "number" && value.length > schema.maxLength) problems.push(`${at}: longer than ${schema.maxLength} characters`);
  if (typeof schema.minLength === "number" && value.length < schema.minLength) problems.push(`${at}: shorter than ${schema.minLength} characters`);
  if (typeof schema.pattern === "string") {
    let pattern: RegExp | null = null;
    try {
      pattern = new RegExp(schema.pattern, "u");
    } catch {
      // A pattern in a syntax JavaScript does not speak is not ours to judge.
    }
    if (pattern && !pattern.test(value)) problems.push(`${at}: does not match ${schema.pattern}`);
  }
}

function checkNumber(schema: JsonSchema, value: number, at: string, problems: string[]): void {
  if (typeof schema.minimum === "number" && value < schema.minimum) problems.push(`${at}: below the minimum ${schema.minimum}`);
  if (typeof schema.maximum === "number" && value > schema.maximum) problems.push(`${at}: above the maximum ${schema.maximum}`);
}

function checkArray(schema: JsonSchema, value: unknown[], at: string, problems: string[], options: Options): void {
  if (typeof schema.minItems === "number" && value.length < schema.minItems) problems.push(`${at}: fewer than ${schema.minItems} items`);
  if (typeof schema.maxItems === "number" && value.length > schema.maxItems) problems.push(`${at}: more than ${schema.maxItems} items`);
  if (isObject(schema.items)) value.forEach((item, index) => check(schema.items as JsonSchema, item, `${at}[${index}]`, problems, options));
}

function checkObject(schema: JsonSchema, value: Record<string, unknown>, at: string, problems: string[], options: Options): void {
  const properties = isObject(schema.properties) ? (schema.properties as Record<string, JsonSchema>) : {};
  for (const name of Array.isArray(schema.required) ? (schema.required as string[]) : []) {
    if (!(name in value)) problems.push(`${at}: the required property "${name}" is missing`);
  }
  if (typeof schema.maxProperties === "number" && Object.keys(value).length > schema.maxProperties) {
    problems.push(`${at}: more than ${schema.maxProperties} properties`);
  }
  const declared = declaredProperties(schema, options);
  for (const [name, item] of Object.entries(value)) {
    const where = `${at}.${name}`;
    if (properties[name]) {
      check(properties[name], item, where, problems, options);
    } else if (schema.additionalProperties === false) {
      problems.push(`${where}: not allowed (additionalProperties: false)`);
    } else if (isObject(schema.additionalProperties)) {
      check(schema.additionalProperties as JsonSchema, item, where, problems, options);
    } else if (options.strict && declared !== null && !declared.has(name) && schema.additionalProperties !== true) {
      problems.push(`${where}: not a documented property`);
    }
  }
}

/** Properties declared by the schema and its allOf parts; null when the schema says nothing about properties. */
function declaredProperties(schema: JsonSchema, options: Options): Set<string> | null {
  const names = new Set<string>();
  let said = false;
  const collect = (part: JsonSchema) => {
    const resolved = resolve(part, options);
    if (isObject(resolved.properties)) {
      said = true;
      Object.keys(resolved.properties).forEach((name) => names.add(name));
    }
    if (Array.isArray(resolved.allOf)) (resolved.allOf as JsonSchema[]).forEach(collect);
  };
  collect(schema);
  return said ? names : null;
}

function resolve(schema: JsonSchema, options: Options): JsonSchema {
  let current = schema;
  for (let depth = 0; typeof current.$ref === "string"; depth++) {
    if (depth > 20) throw new Error(`$ref loop at ${String(current.$ref)}`);
    current = options.resolveRef(current.$ref);
  }
  return current;
}

function typesOf(schema: JsonSchema): string[] | null {
  if (typeof schema.type === "string") return [schema.type];
  if (Array.isArray(schema.type)) return schema.type as string[];
  return null;
}

function hasType(value: unknown, type: string): boolean {
  switch (type) {
    case "null":
      return value === null;
    case "integer":
      return Number.isInteger(value);
    case "number":
      return typeof value === "number" && Number.isFinite(value);
    case "array":
      return Array.isArray(value);
    case "object":
      return isObject(value);
    default:
      return typeof value === type;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "string" ? `the string ${JSON.stringify(value.slice(0, 40))}` : typeof value;
}
