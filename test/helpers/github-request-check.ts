import { checkGraphQLCall } from "../e2e/double/graphql-check.js";
import { loadGitHubDescription } from "../e2e/double/openapi-check.js";
import type { UndocumentedRequest } from "./undocumented-requests.js";

export interface ApiRequest {
  method: string;
  /** Below `https://api.github.com`, as sent: percent-encoded, with the query. */
  path: string;
  /** The raw body; empty when there was none. */
  body: string;
  contentType?: string | undefined;
}

export interface CheckedRequest {
  /** The operation GitHub documents it as (`pulls/create-reply-for-review-comment`, `mutation resolveReviewThread`). */
  operation: string | null;
  /** Null when GitHub documents the request as sent; otherwise the request and its problems. */
  undocumented: UndocumentedRequest | null;
}

/**
 * Whether GitHub documents a request to api.github.com: GraphQL (`POST /graphql`) against GitHub's public schema,
 * anything else against the REST description. The descriptions load on the first request a process checks (about a
 * second), then stay.
 */
export function checkGitHubRequest(request: ApiRequest): CheckedRequest {
  const url = new URL(request.path, "https://api.github.com");
  if (url.pathname === "/graphql") {
    const checked =
      request.method.toUpperCase() === "POST"
        ? checkGraphQLCall({ body: request.body })
        : { operation: null, problems: [`GraphQL is sent with POST, not ${request.method}`] };
    const path = `/graphql ${firstLine(request.body)}`;
    return {
      operation: checked.operation,
      undocumented: checked.problems.length === 0 ? null : { method: request.method, path, problems: checked.problems },
    };
  }
  const checked = loadGitHubDescription("api.github.com").check(request);
  if (checked.documented) return { operation: checked.operationId, undocumented: null };
  const operation = checked.operationId ? ` (${checked.operationId})` : "";
  return {
    operation: checked.operationId,
    undocumented: { method: request.method, path: `${request.path}${operation}`, problems: checked.problems },
  };
}

function firstLine(body: string): string {
  let query: unknown;
  try {
    query = (JSON.parse(body) as { query?: unknown }).query;
  } catch {
    return "";
  }
  if (typeof query !== "string") return "";
  const line = query.trim().split("\n")[0] ?? "";
  return line.length > 100 ? `${line.slice(0, 100)}…` : line;
}
