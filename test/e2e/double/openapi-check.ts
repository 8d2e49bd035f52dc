import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { jsonSchemaChecker, refResolver, type CheckJson, type JsonSchema } from "./json-schema.js";

/**
 * Is a request a documented GitHub REST operation? Checked against GitHub's own OpenAPI
 * description (from @octokit/openapi): the method and path must name an operation, query
 * parameters must be ones it declares, and a JSON body must fit its requestBody schema.
 */
export interface RestCall {
  method: string;
  /** The path below the API root (`/repos/o/r/issues/1?per_page=100`), as sent: percent-encoded. */
  path: string;
  /** The raw request body; empty when there was none. */
  body: string;
  contentType?: string | undefined;
}

export type RestCallCheck =
  | { documented: true; operationId: string; template: string }
  | { documented: false; operationId: string | null; template: string | null; problems: string[] };

export interface OpenApiDescription {
  /** e.g. `ghes-3.19`. */
  name: string;
  check(call: RestCall): RestCallCheck;
}

interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  schema?: JsonSchema;
}

interface Operation {
  operationId: string;
  parameters?: Array<Parameter | { $ref: string }>;
  requestBody?: { required?: boolean; content: Record<string, { schema?: JsonSchema }> } | { $ref: string };
}

interface OpenApiDocument {
  servers?: Array<{ url: string }>;
  paths: Record<string, Record<string, unknown>>;
}

interface Route {
  template: string;
  /** Its place in the most-literal-first order. */
  rank: number;
  /** Segments after the leading slash: a literal, or null for a parameter. */
  segments: Array<string | null>;
  /** A `{path}` parameter spans segments: such a route matches paths of any length. */
  spans: boolean;
  pattern: RegExp;
  names: string[];
  literalSegments: number;
  operations: Map<string, Operation>;
}

const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];
const require = createRequire(import.meta.url);
const loaded = new Map<string, OpenApiDescription>();

/**
 * A description @octokit/openapi ships, loaded once per process: `api.github.com` (paths from the API
 * root), or a GitHub Enterprise Server API under `/api/v3` — the newest `ghes-*` unless one is named.
 */
export function loadGitHubDescription(name: string = newestGhesDescription()): OpenApiDescription {
  let description = loaded.get(name);
  if (!description) {
    const file = path.join(generatedDir(), `${name}.json`);
    const document = JSON.parse(readFileSync(file, "utf8")) as OpenApiDocument;
    if (name.startsWith("ghes-") && !document.servers?.some((server) => server.url.endsWith("/api/v3"))) {
      throw new Error(`${file} does not describe an API served under /api/v3`);
    }
    description = describeApi(name, document);
    loaded.set(name, description);
  }
  return description;
}

export function newestGhesDescription(): string {
  const versions = readdirSync(generatedDir())
    .map((file) => /^ghes-(\d+)\.(\d+)\.json$/.exec(file))
    .filter((match): match is RegExpExecArray => match !== null)
    .map((match) => ({ name: `ghes-${match[1]}.${match[2]}`, major: Number(match[1]), minor: Number(match[2]) }))
    .sort((a, b) => a.major - b.major || a.minor - b.minor);
  const newest = versions.at(-1);
  if (!newest) throw new Error(`no ghes-*.json description in ${generatedDir()}`);
  return newest.name;
}

function generatedDir(): string {
  return path.join(path.dirname(require.resolve("@octokit/openapi/package.json")), "generated");
}

function describeApi(name: string, document: OpenApiDocument): OpenApiDescription {
  const resolveRef = refResolver(document as unknown as JsonSchema);
  const checkJson = jsonSchemaChecker(document as unknown as JsonSchema);
  const deref = <T>(value: T | { $ref: string }): T =>
    typeof value === "object" && value !== null && "$ref" in value ? (resolveRef(value.$ref) as T) : (value as T);
  const routes = Object.entries(document.paths)
    .map(([template, item]) => compileRoute(template, item))
    // The most literal template first: `/issues/comments` before `/issues/{issue_number}`.
    .sort((a, b) => b.literalSegments - a.literalSegments);
  routes.forEach((route, rank) => (route.rank = rank));
  // Candidates by segment count, so a check tests a few dozen patterns rather than every path GitHub has.
  const bySegments = new Map<number, Route[]>();
  for (const route of routes.filter((candidate) => !candidate.spans)) {
    const bucket = bySegments.get(route.segments.length) ?? [];
    bucket.push(route);
    bySegments.set(route.segments.length, bucket);
  }
  const spanning = routes.filter((route) => route.spans);
  const candidates = (pathname: string): Route[] => {
    const parts = pathname.split("/").slice(1);
    const literalFits = (route: Route) =>
      route.spans || route.segments.every((segment, index) => segment === null || segment === parts[index]);
    return [...(bySegments.get(parts.length) ?? []), ...spanning].filter(literalFits).sort((a, b) => a.rank - b.rank);
  };

  return {
    name,
    check(call) {
      const url = new URL(call.path, "http://double.invalid");
      const method = call.method.toLowerCase();
      const matching = candidates(url.pathname).filter((route) => route.pattern.test(url.pathname));
      if (matching.length === 0) return undocumented(null, null, [`no documented path matches ${url.pathname}`]);
      const withMethod = matching.filter((route) => route.operations.has(method));
      if (withMethod.length === 0) {
        const route = matching[0] as Route;
        return undocumented(route.template, null, [
          `${call.method.toUpperCase()} is not documented for ${route.template} (documented: ${[...route.operations.keys()].join(", ").toUpperCase()})`,
        ]);
      }
      let firstProblems: { route: Route; operation: Operation; problems: string[] } | null = null;
      for (const route of withMethod) {
        const operation = route.operations.get(method) as Operation;
        const parameters = (operation.parameters ?? []).map((parameter) => deref<Parameter>(parameter));
        const pathProblems = checkPathParameters(route, url.pathname, parameters, resolveRef, checkJson);
        if (pathProblems.length > 0) {
          firstProblems ??= { route, operation, problems: pathProblems };
          continue;
        }
        const problems = [
          ...checkQuery(url.searchParams, parameters, resolveRef, checkJson),
          ...checkBody(call, operation, deref, checkJson),
        ];
        if (problems.length > 0) return undocumented(route.template, operation.operationId, problems);
        return { documented: true, operationId: operation.operationId, template: route.template };
      }
      const first = firstProblems as { route: Route; operation: Operation; problems: string[] };
      return undocumented(first.route.template, first.operation.operationId, first.problems);
    },
  };
}

function compileRoute(template: string, item: Record<string, unknown>): Route {
  const names: string[] = [];
  const source = template
    .split("/")
    .map((segment) =>
      segment.replace(/\{([^}]+)\}|[^{]+/g, (part, name: string | undefined) => {
        if (name === undefined) return part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
        names.push(name);
        // A file path is the one parameter that may span segments.
        return name === "path" ? "(.+)" : "([^/]+)";
      }),
    )
    .join("/");
  const operations = new Map<string, Operation>();
  for (const method of METHODS) if (item[method]) operations.set(method, item[method] as Operation);
  const segments = template
    .split("/")
    .slice(1)
    .map((segment) => (segment.includes("{") ? null : segment));
  return {
    template,
    rank: 0,
    segments,
    spans: names.includes("path"),
    pattern: new RegExp(`^${source}$`),
    names,
    literalSegments: template.split("/").filter((segment) => segment && !segment.includes("{")).length,
    operations,
  };
}

function checkPathParameters(
  route: Route,
  pathname: string,
  parameters: Parameter[],
  resolveRef: (ref: string) => JsonSchema,
  checkJson: CheckJson,
): string[] {
  const values = route.pattern.exec(pathname)?.slice(1) ?? [];
  const problems: string[] = [];
  route.names.forEach((name, index) => {
    const parameter = parameters.find((candidate) => candidate.in === "path" && candidate.name === name);
    const value = decodeURIComponent(values[index] ?? "");
    if (parameter?.schema)
      problems.push(
        ...checkJson(parameter.schema, coerce(value, parameter.schema, resolveRef), `path parameter ${name}`),
      );
  });
  return problems;
}

function checkQuery(
  query: URLSearchParams,
  parameters: Parameter[],
  resolveRef: (ref: string) => JsonSchema,
  checkJson: CheckJson,
): string[] {
  const problems: string[] = [];
  const declared = parameters.filter((parameter) => parameter.in === "query");
  for (const [name, value] of query) {
    const parameter = declared.find((candidate) => candidate.name === name);
    if (!parameter) {
      problems.push(`query parameter ${name} is not documented for this operation`);
      continue;
    }
    if (parameter.schema)
      problems.push(
        ...checkJson(parameter.schema, coerce(value, parameter.schema, resolveRef), `query parameter ${name}`),
      );
  }
  for (const parameter of declared)
    if (parameter.required && !query.has(parameter.name))
      problems.push(`the required query parameter ${parameter.name} is missing`);
  return problems;
}

function checkBody(
  call: RestCall,
  operation: Operation,
  deref: <T>(value: T | { $ref: string }) => T,
  checkJson: CheckJson,
): string[] {
  const requestBody = operation.requestBody ? deref(operation.requestBody) : null;
  const sent = call.body.trim().length > 0;
  if (!requestBody) return sent ? [`sends a body, but ${operation.operationId} takes none`] : [];
  if (!sent) return requestBody.required ? [`${operation.operationId} requires a request body`] : [];
  const mediaType = (call.contentType ?? "application/json").split(";")[0]?.trim().toLowerCase() ?? "";
  const content = requestBody.content[mediaType];
  if (!content)
    return [
      `a ${mediaType} body is not documented for ${operation.operationId} (documented: ${Object.keys(requestBody.content).join(", ")})`,
    ];
  if (mediaType !== "application/json" || !content.schema) return [];
  let body: unknown;
  try {
    body = JSON.parse(call.body);
  } catch {
    return ["the body is not valid JSON"];
  }
  return checkJson(content.schema, body);
}

/** Path and query values arrive as text; compare them as the type the schema names. */
function coerce(value: string, schema: JsonSchema, resolveRef: (ref: string) => JsonSchema): unknown {
  const resolved = typeof schema.$ref === "string" ? resolveRef(schema.$ref) : schema;
  // A nullable schema's type is [type, "null"] once prepared for ajv.
  switch ([resolved.type].flat().find((type) => type !== "null")) {
    case "integer":
    case "number":
      return /^-?\d+(\.\d+)?$/.test(value) ? Number(value) : value;
    case "boolean":
      return value === "true" ? true : value === "false" ? false : value;
    case "array":
      return value.split(",");
    default:
      return value;
  }
}

function undocumented(template: string | null, operationId: string | null, problems: string[]): RestCallCheck {
  return { documented: false, operationId, template, problems };
}
