import { Ajv2019, type ErrorObject, type ValidateFunction } from "ajv/dist/2019.js";

/**
 * JSON Schema checks by ajv, for GitHub's OpenAPI 3.0 request-body and parameter schemas (and
 * other standalone schemas). Read as GitHub means them: `nullable`, a `$ref`'s siblings ignored,
 * one matching `oneOf` branch enough (GitHub's overlap in places), `format` not checked, a pattern
 * JavaScript cannot compile not judged.
 *
 * Strict: a property the schema does not declare is reported (`unevaluatedProperties: false` where
 * the schema says nothing), because GitHub ignores unknown fields silently and an app that sends one
 * is usually sending it by mistake. `allOf` parts are read loosely: their parent declares the whole.
 */
export type JsonSchema = { [keyword: string]: unknown };

/** Problems of `value` against a schema, each `<where>: <what>`; empty when it fits. */
export type CheckJson = (schema: JsonSchema, value: unknown, at?: string) => string[];

const ROOT = "document";

/**
 * A checker for the schemas of one document (an OpenAPI description, whose local `$ref`s they use),
 * or for standalone schemas without one. Each schema is rewritten in place for ajv the first time it is
 * checked, with what it refers to: the whole description would take a second.
 */
export function jsonSchemaChecker(document?: JsonSchema): CheckJson {
  const ajv = new Ajv2019({
    strict: false,
    allErrors: true,
    verbose: true,
    validateFormats: false,
    validateSchema: false,
  });
  const resolveRef = document
    ? refResolver(document)
    : (ref: string): JsonSchema => {
        throw new Error(`a $ref (${ref}) needs the document it points into`);
      };
  if (document) ajv.addSchema(document, ROOT);
  const prepared = new WeakSet<object>();
  const compiled = new WeakMap<object, ValidateFunction>();
  return (schema, value, at = "body") => {
    let validate = compiled.get(schema);
    if (!validate) {
      prepare(schema, false, resolveRef, prepared);
      validate = ajv.compile(schema);
      compiled.set(schema, validate);
    }
    return validate(value) ? [] : describeErrors(validate.errors ?? [], at);
  };
}

/** A local `$ref` (`#/components/schemas/app-permissions`) of the document, also once prepared for ajv. */
export function refResolver(document: JsonSchema): (ref: string) => JsonSchema {
  return (ref) => {
    const local = ref.startsWith(`${ROOT}#/`) ? ref.slice(ROOT.length) : ref;
    if (!local.startsWith("#/")) throw new Error(`only local $refs are supported: ${ref}`);
    let node: unknown = document;
    for (const key of local.slice(2).split("/"))
      node = (node as Record<string, unknown> | undefined)?.[key.replace(/~1/g, "/").replace(/~0/g, "~")];
    if (typeof node !== "object" || node === null) throw new Error(`unresolvable $ref ${ref}`);
    return node as JsonSchema;
  };
}

/** Rewrites a schema, those inside it and those it refers to, into what ajv reads as GitHub means them. */
function prepare(
  schema: JsonSchema,
  loose: boolean,
  resolveRef: (ref: string) => JsonSchema,
  prepared: WeakSet<object>,
): void {
  if (prepared.has(schema)) return;
  prepared.add(schema);
  const inner = (child: unknown) => {
    if (isObject(child)) prepare(child, false, resolveRef, prepared);
  };
  if (typeof schema.$ref === "string") {
    for (const key of Object.keys(schema)) if (key !== "$ref") delete schema[key];
    inner(resolveRef(schema.$ref));
    // Compiled on its own, a schema reaches the document's components through the document's name.
    if (schema.$ref.startsWith("#/")) schema.$ref = `${ROOT}${schema.$ref}`;
    return;
  }
  if (schema.nullable === true) {
    delete schema.nullable;
    if (typeof schema.type === "string") {
      schema.type = [schema.type, "null"];
      if (Array.isArray(schema.enum)) schema.enum = [...schema.enum, null];
    } else {
      const rest = { ...schema };
      for (const key of Object.keys(schema)) delete schema[key];
      schema.anyOf = [{ type: "null" }, rest];
      return prepare(rest, loose, resolveRef, prepared);
    }
  }
  if (Array.isArray(schema.oneOf)) {
    schema.anyOf = [...(Array.isArray(schema.anyOf) ? schema.anyOf : []), ...schema.oneOf];
    delete schema.oneOf;
  }
  if (typeof schema.pattern === "string" && !compiles(schema.pattern)) delete schema.pattern;
  if (Array.isArray(schema.allOf)) {
    // A part from elsewhere is copied here, loose: the same component is strict where it stands alone.
    schema.allOf = (schema.allOf as JsonSchema[]).map((part) => {
      const copy = typeof part.$ref === "string" ? { ...resolveRef(part.$ref) } : part;
      prepare(copy, true, resolveRef, prepared);
      return copy;
    });
  }
  const declares =
    isObject(schema.properties) ||
    (Array.isArray(schema.allOf) && (schema.allOf as JsonSchema[]).some((part) => isObject(part.properties)));
  if (loose) delete schema.unevaluatedProperties;
  else if (declares && schema.additionalProperties === undefined) schema.unevaluatedProperties = false;
  for (const key of ["properties", "patternProperties"])
    if (isObject(schema[key])) Object.values(schema[key] as Record<string, unknown>).forEach(inner);
  for (const key of ["items", "additionalProperties", "not"]) inner(schema[key]);
  if (Array.isArray(schema.anyOf)) (schema.anyOf as unknown[]).forEach(inner);
}

/**
 * ajv's errors as `<where>: <what>`; an `anyOf` that failed in every branch is one problem, naming each branch's first.
 */
function describeErrors(errors: ErrorObject[], at: string): string[] {
  const problems: string[] = [];
  const branchErrors: ErrorObject[] = [];
  for (const error of errors) {
    if (error.keyword !== "anyOf") {
      branchErrors.push(error);
      continue;
    }
    // ajv reports a failed anyOf after its branches' errors, which lie at or below its place.
    const inside: ErrorObject[] = [];
    while (branchErrors.length > 0 && (branchErrors.at(-1) as ErrorObject).instancePath.startsWith(error.instancePath))
      inside.unshift(branchErrors.pop() as ErrorObject);
    problems.push(...branchErrors.splice(0).map((outside) => describeError(outside, at)));
    const firsts = inside.filter(
      (branch, index) => index === 0 || branchOf(branch, error) !== branchOf(inside[index - 1] as ErrorObject, error),
    );
    problems.push(
      `${where(at, error.instancePath)}: matches none of the anyOf alternatives (${firsts.map((branch) => describeError(branch, at)).join(" | ")})`,
    );
  }
  return [...problems, ...branchErrors.map((error) => describeError(error, at))];
}

function branchOf(error: ErrorObject, anyOf: ErrorObject): string {
  return error.schemaPath.startsWith(`${anyOf.schemaPath}/`)
    ? (error.schemaPath.slice(anyOf.schemaPath.length + 1).split("/")[0] ?? "")
    : error.schemaPath;
}

function describeError(error: ErrorObject, at: string): string {
  const here = where(at, error.instancePath);
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case "unevaluatedProperties":
      return `${here}.${String(params.unevaluatedProperty)}: not a documented property`;
    case "additionalProperties":
      return `${here}.${String(params.additionalProperty)}: not allowed (additionalProperties: false)`;
    case "required":
      return `${here}: the required property "${String(params.missingProperty)}" is missing`;
    case "enum":
      return `${here}: ${JSON.stringify(error.data)} is not one of ${JSON.stringify(params.allowedValues)}`;
    case "type":
      return `${here}: expected ${[params.type].flat().join(" or ")}, got ${describe(error.data)}`;
    default:
      return `${here}: ${error.message ?? error.keyword}`;
  }
}

/** `/labels/0/name` under `body` reads `body.labels[0].name`. */
function where(at: string, instancePath: string): string {
  return instancePath
    .split("/")
    .slice(1)
    .map((part) => part.replace(/~1/g, "/").replace(/~0/g, "~"))
    .reduce((path, part) => (/^\d+$/.test(part) ? `${path}[${part}]` : `${path}.${part}`), at);
}

function compiles(pattern: string): boolean {
  try {
    new RegExp(pattern, "u");
    return true;
  } catch {
    return false;
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
