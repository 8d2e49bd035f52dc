import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import {
  buildClientSchema,
  getVariableValues,
  Kind,
  parse,
  validate,
  type DocumentNode,
  type GraphQLError,
  type GraphQLSchema,
  type IntrospectionQuery,
  type OperationDefinitionNode,
} from "graphql";

/**
 * Is a GraphQL request one GitHub would run? Checked against GitHub's public schema (from
 * @octokit/graphql-schema) with graphql-js, as a GraphQL server checks a request before running it:
 * the query must parse and validate (fields, arguments, fragments, variable use), the operation must be
 * named unambiguously, and the variables must coerce to the types the operation declares. A variable the
 * operation does not declare is reported too: GitHub ignores it, so an app that sends one is mistaken.
 */
export interface GraphQLCall {
  /** The raw request body: `{"query": "...", "variables": {...}, "operationName": "..."}`. */
  body: string;
}

const require = createRequire(import.meta.url);
let schema: GraphQLSchema | null = null;

/** GitHub's schema, built once per process (a fifth of a second). */
export function gitHubGraphQLSchema(): GraphQLSchema {
  if (!schema) {
    // The package exports only its module, which parses the schema on import: read the file it reads, once needed.
    const file = (require.resolve.paths("@octokit/graphql-schema") ?? [])
      .map((dir) => path.join(dir, "@octokit", "graphql-schema", "schema.json"))
      .find((candidate) => existsSync(candidate));
    if (!file) throw new Error("@octokit/graphql-schema is not installed");
    const introspection = JSON.parse(readFileSync(file, "utf8")) as { data?: IntrospectionQuery } & IntrospectionQuery;
    schema = buildClientSchema(introspection.data ?? introspection, { assumeValid: true });
  }
  return schema;
}

export interface GraphQLCallCheck {
  /** `query repository`, `mutation resolveReviewThread`: the operation's type and top-level fields, once it parses. */
  operation: string | null;
  /** Empty when GitHub would run it. */
  problems: string[];
}

/** A GraphQL request against GitHub's schema. */
export function checkGraphQLCall(call: GraphQLCall): GraphQLCallCheck {
  let operation: string | null = null;
  const problems = graphQLProblems(call, (chosen) => {
    const fields = chosen.selectionSet.selections.flatMap((selection) =>
      selection.kind === Kind.FIELD ? [selection.name.value] : [],
    );
    operation = `${chosen.operation} ${fields.join(",")}`;
  });
  return { operation, problems };
}

function graphQLProblems(call: GraphQLCall, chosen: (operation: OperationDefinitionNode) => void): string[] {
  let request: unknown;
  try {
    request = JSON.parse(call.body);
  } catch {
    return ["the body is not valid JSON"];
  }
  if (typeof request !== "object" || request === null) return ["the body is not a JSON object"];
  const { query, variables = {}, operationName } = request as Record<string, unknown>;
  if (typeof query !== "string") return ["the body has no query string"];
  if (typeof variables !== "object" || variables === null || Array.isArray(variables))
    return ["variables is not a JSON object"];
  let document: DocumentNode;
  try {
    document = parse(query);
  } catch (error) {
    return [`the query does not parse: ${(error as Error).message}`];
  }
  const invalid = validate(gitHubGraphQLSchema(), document);
  if (invalid.length > 0) return invalid.map(describe);
  const operations = document.definitions.filter(
    (definition): definition is OperationDefinitionNode => definition.kind === Kind.OPERATION_DEFINITION,
  );
  const operation =
    typeof operationName === "string"
      ? operations.find((candidate) => candidate.name?.value === operationName)
      : operations.length === 1
        ? operations[0]
        : undefined;
  if (!operation)
    return [
      typeof operationName === "string"
        ? `no operation named ${operationName}`
        : "the document has several operations and the request names none",
    ];
  chosen(operation);
  const declared = new Set((operation.variableDefinitions ?? []).map((definition) => definition.variable.name.value));
  const coerced = getVariableValues(
    gitHubGraphQLSchema(),
    operation.variableDefinitions ?? [],
    variables as Record<string, unknown>,
  );
  return [
    ...(coerced.errors ?? []).map(describe),
    ...Object.keys(variables)
      .filter((name) => !declared.has(name))
      .map((name) => `variable $${name} is sent but the operation does not declare it`),
  ];
}

function describe(error: GraphQLError): string {
  const at = error.locations?.[0];
  return at ? `${error.message} (line ${at.line}, column ${at.column})` : error.message;
}
