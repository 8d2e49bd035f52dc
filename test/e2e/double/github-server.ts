import { generateKeyPairSync, randomUUID, type KeyObject } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { AppAuthority, type TokenLifetime } from "./auth.js";
import {
  copyServedRepository,
  createServedRepository,
  GIT_PATH,
  GitReadCache,
  serveGitRequest,
  type ServedRepository,
} from "./git-http.js";
import { checkGraphQLCall } from "./graphql-check.js";
import { loadGitHubDescription } from "./openapi-check.js";
import { findRestRoute, type DoubleContext, type RestReply } from "./rest-routes.js";
import { RepositoryState, type IssueDraft, type RepositoryRole } from "./state.js";

export interface GitHubDoubleOptions {
  appId?: number;
  /** The App's slug; its comments are by `<slug>[bot]`. */
  appSlug?: string;
  /** The App's public key. Without one the double makes a key pair and hands out `privateKey`. */
  appPublicKey?: string | KeyObject;
  installationId?: number;
  /** What installation tokens are granted (returned with each token). */
  installationPermissions?: Record<string, string>;
  owner?: string;
  repo?: string;
  defaultBranch?: string;
  /** The repository's files on the default branch (one initial commit). */
  files: Record<string, string>;
  /** Issues to open, numbered from 1. */
  issues?: IssueDraft[];
  /** login → repository role; anyone else is not a collaborator. */
  permissions?: Record<string, RepositoryRole>;
  /** Which @octokit/openapi description to check REST calls against (default: the newest GHES one). */
  description?: string;
  /**
   * More installations of the App, each with a repository of its own (the one above belongs to
   * `installationId`). A token opens only its own installation's repository, as on GitHub.
   */
  installations?: InstallationDraft[];
  /** Fetches answered from memory until a push through the double (the load bench; see `GitReadCache`). */
  cacheGitReads?: boolean;
}

export interface InstallationDraft {
  id: number;
  /** The account the App is installed on; its repository is `<owner>/<repo>`. */
  owner: string;
  /** Default: the main repository's name. */
  repo?: string;
  /** Default: a copy of the main repository (same commits). */
  files?: Record<string, string>;
  issues?: IssueDraft[];
  permissions?: Record<string, RepositoryRole>;
}

export type AuthUsed = "app-jwt" | "installation-token" | "none" | "refused";

export interface RecordedRequest {
  kind: "rest" | "graphql" | "git" | "other";
  method: string;
  /** Path and query as sent, below `/api/v3` for REST. */
  path: string;
  body: string;
  auth: AuthUsed;
  status: number;
  /** REST: the documented operation the call matched. */
  operationId?: string | null;
  /** git: `git-upload-pack` or `git-receive-pack`. */
  gitService?: string;
  /** When the answer went out (ms since the epoch). */
  at?: number;
  /** The installation whose token the call used (installation-token calls only). */
  installationId?: number;
}

export interface ApiViolation {
  method: string;
  path: string;
  problems: string[];
}

export interface GitHubDouble {
  /** `http://127.0.0.1:<port>`: web URLs, git. */
  url: string;
  /** `<url>/api/v3`. */
  apiUrl: string;
  /** `127.0.0.1:<port>`, for `GHE_HOST` (with `GHE_PROTOCOL=http`). */
  host: string;
  /** What a webhook payload's `repository.clone_url` carries. */
  cloneUrl: string;
  htmlUrl: string;
  appId: number;
  appSlug: string;
  botLogin: string;
  installationId: number;
  /** The App's private key (PEM) when the double made the key pair; null when one was given. */
  privateKey: string | null;
  /** The OpenAPI description REST calls are checked against. */
  description: string;
  state: RepositoryState;
  repository: ServedRepository;
  /** Every request, in order (no credentials in here). */
  requests: RecordedRequest[];
  /** Requests that are not documented GitHub operations, or do not fit their documented shape. */
  violations: ApiViolation[];
  /** Documented operations the double does not serve (answered 404). */
  unimplemented: RecordedRequest[];
  /** A valid installation token without the JWT dance (for front ends handed a token, like an Action). */
  issueInstallationToken(): string;
  issuedTokens(): string[];
  /** Refuses an installation token from now on, as GitHub does once it has expired: a lapse when a test says. */
  expireToken(token: string): void;
  /** How long installation tokens minted from now on live (an hour unless a test shortens it). */
  setTokenLifetime(ms: number): void;
  /**
   * The next tokens minted live these times (ms, or what they declare and how long they are honoured), in order; then
   * `setTokenLifetime`'s again.
   */
  queueTokenLifetimes(ms: Array<number | TokenLifetime>): void;
  /** Every installation id the double knows, `installationId` first. */
  installationIds: number[];
  /**
   * The double as seen from one installation: its `state`, `repository`, `cloneUrl`, `htmlUrl`
   * and `installationId` (for `issueCommentCreated` and friends); everything else is shared.
   */
  installation(id: number): GitHubDouble;
  stop(): Promise<void>;
}

/**
 * A local GitHub (Enterprise Server flavour): REST under `/api/v3` with memory, GraphQL's
 * `minimizeComment`, and git over smart HTTP for one repository — all behind GitHub App
 * authentication. Each request is checked against GitHub's OpenAPI description.
 */
export async function startGitHubDouble(options: GitHubDoubleOptions): Promise<GitHubDouble> {
  const appId = options.appId ?? 1;
  const appSlug = options.appSlug ?? "blueprint";
  const installationId = options.installationId ?? 42;
  const keys = options.appPublicKey ? null : generateKeyPairSync("rsa", { modulusLength: 2048 });
  const authority = new AppAuthority(appId, options.appPublicKey ?? (keys as { publicKey: KeyObject }).publicKey);
  const description = loadGitHubDescription(options.description);

  const root = mkdtempSync(path.join(os.tmpdir(), "github-double-"));
  const repository = createServedRepository(
    root,
    options.owner ?? "octo-org",
    options.repo ?? "hello-world",
    options.files,
    options.defaultBranch,
  );
  // Comment and reaction ids are unique across all repositories, as on GitHub.
  let nextId = 1000;
  const ids = () => nextId++;
  const bot = { login: `${appSlug}[bot]`, type: "Bot" as const };
  const state = new RepositoryState(options.permissions ?? {}, bot, ids);
  for (const issue of options.issues ?? []) state.addIssue(issue);

  const readCache = options.cacheGitReads ? new GitReadCache() : undefined;
  const requests: RecordedRequest[] = [];
  const violations: ApiViolation[] = [];
  const unimplemented: RecordedRequest[] = [];
  const context: DoubleContext = { state, repository, webUrl: "", apiUrl: "", appId, appSlug };

  /** One repository per installation; `<owner>/<repo>` (lower case) → its installation and context. */
  interface Tenant {
    installationId: number;
    context: DoubleContext;
  }
  const repoKey = (owner: string, name: string) => `${owner}/${name}`.toLowerCase();
  const tenants = new Map<string, Tenant>([[repoKey(repository.owner, repository.name), { installationId, context }]]);
  const byInstallation = new Map<number, Tenant>([[installationId, { installationId, context }]]);
  for (const draft of options.installations ?? []) {
    const name = draft.repo ?? repository.name;
    if (byInstallation.has(draft.id)) throw new Error(`installation ${draft.id} is given twice`);
    if (tenants.has(repoKey(draft.owner, name))) throw new Error(`repository ${draft.owner}/${name} is given twice`);
    const served = draft.files
      ? createServedRepository(root, draft.owner, name, draft.files, options.defaultBranch)
      : copyServedRepository(repository, root, draft.owner, name);
    const tenantState = new RepositoryState(draft.permissions ?? {}, bot, ids);
    for (const issue of draft.issues ?? []) tenantState.addIssue(issue);
    const tenant: Tenant = {
      installationId: draft.id,
      context: { ...context, state: tenantState, repository: served },
    };
    tenants.set(repoKey(draft.owner, name), tenant);
    byInstallation.set(draft.id, tenant);
  }
  /** The tenant a path below `/api/v3` (or a git path) names, if any. */
  const tenantOf = (pathname: string): Tenant | undefined => {
    const named = /^\/(?:repos\/)?([^/]+)\/([^/]+?)(?:\.git)?(?:\/|$)/.exec(pathname);
    return named
      ? tenants.get(repoKey(decodeURIComponent(named[1] ?? ""), decodeURIComponent(named[2] ?? "")))
      : undefined;
  };

  const handleRest = (req: http.IncomingMessage, res: http.ServerResponse, body: Buffer): RecordedRequest => {
    const apiPath = (req.url ?? "/").slice("/api/v3".length) || "/";
    const method = req.method ?? "GET";
    const raw = body.toString("utf8");
    const record: RecordedRequest = { kind: "rest", method, path: apiPath, body: raw, auth: "none", status: 0 };
    const check = description.check({ method, path: apiPath, body: raw, contentType: req.headers["content-type"] });
    record.operationId = check.operationId;
    if (!check.documented) violations.push({ method, path: apiPath, problems: check.problems });

    const url = new URL(apiPath, "http://double.invalid");
    const found = findRestRoute(method, url.pathname);
    const appRoute = url.pathname.startsWith("/app/") || url.pathname === "/app";
    const authorization = req.headers.authorization;
    if (appRoute ? authority.jwtProblem(authorization) !== null : !authority.restTokenOk(authorization)) {
      record.auth = authorization ? "refused" : "none";
      return send(res, record, {
        status: 401,
        body: { message: authorization ? "Bad credentials" : "Requires authentication" },
      });
    }
    record.auth = appRoute ? "app-jwt" : "installation-token";
    const caller = appRoute ? null : authority.installationOfHeader(authorization);
    if (caller !== null) record.installationId = caller;

    const tokenGrant = /^\/app\/installations\/(\d+)\/access_tokens$/.exec(url.pathname);
    if (tokenGrant && method === "POST") {
      const granted = Number(tokenGrant[1]);
      if (!byInstallation.has(granted)) return send(res, record, { status: 404, body: { message: "Not Found" } });
      const installed = options.installationPermissions ?? DEFAULT_PERMISSIONS;
      // As GitHub: a token may be narrowed to fewer permissions, never widened past what the installation was granted.
      const asked = (safeJson(raw) as { permissions?: Record<string, string> } | null)?.permissions;
      const beyond = Object.entries(asked ?? {}).filter(
        ([name, level]) => !grants(installed, [name, level === "write" ? "write" : "read"]),
      );
      if (beyond.length > 0)
        return send(res, record, {
          status: 422,
          body: {
            message: "The permissions requested are not granted to this installation.",
            documentation_url: "https://docs.github.com/rest/apps/apps#create-an-installation-access-token-for-an-app",
          },
        });
      const { token, expiresAt } = authority.issue(granted, asked ?? installed);
      return send(res, record, {
        status: 201,
        body: { token, expires_at: expiresAt, permissions: asked ?? installed, repository_selection: "selected" },
      });
    }
    if (!found) {
      unimplemented.push(record);
      return send(res, record, {
        status: 404,
        body: { message: "Not Found (the GitHub double does not serve this operation)" },
      });
    }
    // A permission the token lacks (e.g. `checks: write`) answers 403, as on GitHub.
    const lacking =
      found.route.needs &&
      !grants(
        authority.permissionsOfHeader(authorization) ?? options.installationPermissions ?? DEFAULT_PERMISSIONS,
        found.route.needs,
      );
    if (lacking)
      return send(res, record, {
        status: 403,
        body: { message: "Resource not accessible by integration", documentation_url: "https://docs.github.com/rest" },
      });
    // A repository of another installation is invisible to this token, as on GitHub.
    const tenant = url.pathname.startsWith("/repos/") ? tenantOf(url.pathname) : undefined;
    if (tenant && tenant.installationId !== caller)
      return send(res, record, { status: 404, body: { message: "Not Found" } });
    let parsed: Record<string, unknown> = {};
    if (raw.trim()) {
      try {
        parsed = JSON.parse(raw) as Record<string, unknown>;
      } catch {
        return send(res, record, { status: 400, body: { message: "Problems parsing JSON" } });
      }
    }
    return send(
      res,
      record,
      found.route.handle(tenant?.context ?? context, {
        params: found.params,
        query: url.searchParams,
        body: parsed,
        pathname: url.pathname,
      }),
    );
  };

  const handleGraphql = (req: http.IncomingMessage, res: http.ServerResponse, body: Buffer): RecordedRequest => {
    const raw = body.toString("utf8");
    const record: RecordedRequest = {
      kind: "graphql",
      method: req.method ?? "POST",
      path: "/api/graphql",
      body: raw,
      auth: "none",
      status: 0,
    };
    if (!authority.restTokenOk(req.headers.authorization)) {
      record.auth = req.headers.authorization ? "refused" : "none";
      return send(res, record, { status: 401, body: { message: "Bad credentials" } });
    }
    record.auth = "installation-token";
    const caller = authority.installationOfHeader(req.headers.authorization);
    if (caller !== null) record.installationId = caller;
    const request = safeJson(raw) as { query?: string; variables?: Record<string, unknown> } | null;
    // Checked against GitHub's public GraphQL schema, as REST calls are against its OpenAPI description.
    const schemaProblems = req.method === "POST" ? checkGraphQLCall({ body: raw }).problems : [];
    if (schemaProblems.length > 0)
      violations.push({ method: record.method, path: record.path, problems: schemaProblems });
    const id = request?.variables?.id;
    // A pull request's draft state changes only through GraphQL (Blueprint keeps it in step with verification).
    const toDraft =
      request?.query && /\bconvertPullRequestToDraft\s*\(/.test(request.query)
        ? true
        : request?.query && /\bmarkPullRequestReadyForReview\s*\(/.test(request.query)
          ? false
          : null;
    if (req.method === "POST" && toDraft !== null) {
      const pull = byInstallation
        .get(caller ?? -1)
        ?.context.state.pulls.find((candidate) => `PR_kwDO${candidate.number}` === id);
      if (!pull)
        return send(res, record, {
          status: 200,
          body: {
            data: null,
            errors: [
              { type: "NOT_FOUND", message: `Could not resolve to a node with the global id of '${String(id)}'` },
            ],
          },
        });
      pull.draft = toDraft;
      const mutation = toDraft ? "convertPullRequestToDraft" : "markPullRequestReadyForReview";
      return send(res, record, { status: 200, body: { data: { [mutation]: { pullRequest: { isDraft: toDraft } } } } });
    }
    if (req.method !== "POST" || !request?.query || !/\bminimizeComment\s*\(/.test(request.query)) {
      violations.push({
        method: record.method,
        path: record.path,
        problems: [
          `a GraphQL operation the double does not know: ${request?.query?.slice(0, 120) ?? raw.slice(0, 120)}`,
        ],
      });
      return send(res, record, {
        status: 200,
        body: {
          errors: [
            {
              message:
                "The GitHub double only knows the minimizeComment, convertPullRequestToDraft and markPullRequestReadyForReview mutations",
            },
          ],
        },
      });
    }
    // Node ids are global; a comment in another installation's repository does not resolve.
    const comment = byInstallation
      .get(caller ?? -1)
      ?.context.state.comments.find((candidate) => candidate.nodeId === id);
    if (!comment)
      return send(res, record, {
        status: 200,
        body: {
          data: { minimizeComment: null },
          errors: [{ type: "NOT_FOUND", message: `Could not resolve to a node with the global id of '${String(id)}'` }],
        },
      });
    comment.minimized = /classifier:\s*(\w+)/.exec(request.query)?.[1] ?? "OUTDATED";
    return send(res, record, {
      status: 200,
      body: { data: { minimizeComment: { minimizedComment: { isMinimized: true } } } },
    });
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      const pathname = new URL(req.url ?? "/", "http://double.invalid").pathname;
      const handled: Promise<RecordedRequest> = (async () => {
        if (GIT_PATH.test(pathname)) {
          const authorize = (header: string | undefined, served: string) => {
            if (!authority.gitTokenOk(header)) return false;
            const tenant = tenants.get(served.toLowerCase());
            return !tenant || tenant.installationId === authority.installationOfHeader(header);
          };
          const exchange = await serveGitRequest(req, res, body, {
            projectRoot: root,
            authorize,
            ...(readCache ? { readCache } : {}),
          });
          const caller = exchange.authorized ? authority.installationOfHeader(req.headers.authorization) : null;
          return {
            kind: "git",
            method: req.method ?? "GET",
            path: req.url ?? "/",
            body: "",
            auth: exchange.authorized ? "installation-token" : req.headers.authorization ? "refused" : "none",
            status: exchange.status,
            gitService: exchange.service,
            ...(caller !== null ? { installationId: caller } : {}),
          };
        }
        if (pathname === "/api/graphql") return handleGraphql(req, res, body);
        if (pathname.startsWith("/api/v3/")) return handleRest(req, res, body);
        const record: RecordedRequest = {
          kind: "other",
          method: req.method ?? "GET",
          path: req.url ?? "/",
          body: body.toString("utf8"),
          auth: "none",
          status: 0,
        };
        violations.push({
          method: record.method,
          path: record.path,
          problems: ["not a GitHub API, GraphQL or git path"],
        });
        return send(res, record, { status: 404, body: { message: "Not Found" } });
      })();
      handled.then(
        (record) => requests.push({ ...record, at: Date.now() }),
        (error: unknown) => {
          requests.push({
            kind: "other",
            method: req.method ?? "GET",
            path: req.url ?? "/",
            body: "",
            auth: "none",
            status: 500,
          });
          if (!res.headersSent) res.writeHead(500, { "content-type": "text/plain" });
          res.end(`the GitHub double failed: ${error instanceof Error ? error.stack : String(error)}`);
        },
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  context.webUrl = url;
  context.apiUrl = `${url}/api/v3`;
  for (const tenant of tenants.values())
    Object.assign(tenant.context, { webUrl: context.webUrl, apiUrl: context.apiUrl });

  const double: GitHubDouble = {
    url,
    apiUrl: context.apiUrl,
    host: `127.0.0.1:${port}`,
    cloneUrl: `${url}/${repository.owner}/${repository.name}.git`,
    htmlUrl: `${url}/${repository.owner}/${repository.name}`,
    appId,
    appSlug,
    botLogin: state.bot.login,
    installationId,
    privateKey: keys ? keys.privateKey.export({ type: "pkcs1", format: "pem" }).toString() : null,
    description: description.name,
    state,
    repository,
    requests,
    violations,
    unimplemented,
    issueInstallationToken: () =>
      authority.issue(installationId, options.installationPermissions ?? DEFAULT_PERMISSIONS).token,
    issuedTokens: () => authority.issuedTokens(),
    expireToken: (token) => authority.expire(token),
    setTokenLifetime: (ms) => {
      authority.tokenLifetimeMs = ms;
    },
    queueTokenLifetimes: (ms) => {
      authority.nextLifetimesMs.push(...ms);
    },
    installationIds: [...byInstallation.keys()],
    installation: (id) => {
      const tenant = byInstallation.get(id);
      if (!tenant) throw new Error(`the double has no installation ${id}`);
      if (id === installationId) return double;
      const { state: tenantState, repository: served } = tenant.context;
      return {
        ...double,
        installationId: id,
        state: tenantState,
        repository: served,
        cloneUrl: `${url}/${served.owner}/${served.name}.git`,
        htmlUrl: `${url}/${served.owner}/${served.name}`,
        issueInstallationToken: () => authority.issue(id).token,
      };
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => {
          rmSync(root, { recursive: true, force: true });
          resolve();
        });
      }),
  };
  return double;
}

/** What an installation is granted unless a test says otherwise: what app.yml asks for. */
const DEFAULT_PERMISSIONS: Record<string, string> = {
  contents: "write",
  issues: "write",
  pull_requests: "write",
  checks: "write",
  metadata: "read",
};

function grants(permissions: Record<string, string>, [name, level]: [string, "read" | "write"]): boolean {
  return permissions[name] === "write" || (level === "read" && permissions[name] === "read");
}

function send(res: http.ServerResponse, record: RecordedRequest, reply: RestReply): RecordedRequest {
  record.status = reply.status;
  res.writeHead(reply.status, {
    "content-type": "application/json; charset=utf-8",
    "x-github-request-id": randomUUID(),
    "x-github-media-type": "github.v3; format=json",
    ...reply.headers,
  });
  res.end(reply.body === undefined ? "" : JSON.stringify(reply.body));
  return record;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}
