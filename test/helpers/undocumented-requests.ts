/**
 * Requests a GitHub double served that GitHub does not document, waiting to fail the test that made them.
 * Light on purpose (no schema in here): the setup file that fails tests imports it in every test process.
 */
export interface UndocumentedRequest {
  method: string;
  /** The path as sent (`/repos/o/r/issues/1?per_page=100`), or `/graphql` with the operation's first line. */
  path: string;
  problems: string[];
}

// Kept on the global object: with vitest's isolate: false, a setup file may be evaluated again for each test file
// while the helpers that report stay loaded, and both must see one list.
const KEY = Symbol.for("blueprint.test.undocumentedRequests");
const holder = globalThis as typeof globalThis & { [KEY]?: UndocumentedRequest[] };

export function reportUndocumented(request: UndocumentedRequest): void {
  (holder[KEY] ??= []).push(request);
}

/**
 * The requests reported since the last call, which forgets them: a test that sends a wrong request on purpose takes
 * it here (or through `failOnUndocumented`, expecting the throw) after asserting on it, and so does not fail.
 */
export function takeUndocumented(): UndocumentedRequest[] {
  const taken = holder[KEY] ?? [];
  holder[KEY] = [];
  return taken;
}

/** Throws, naming each request and what is wrong with it, when any was reported since the last call. */
export function failOnUndocumented(): void {
  const taken = takeUndocumented();
  if (taken.length === 0) return;
  throw new Error(
    [
      `the GitHub double was sent ${taken.length} request(s) that GitHub does not document ` +
        "(checked against @octokit/openapi's api.github.com description and @octokit/graphql-schema):",
      ...taken.flatMap((request) => [
        `  ${request.method} ${request.path}`,
        ...request.problems.map((problem) => `    - ${problem}`),
      ]),
    ].join("\n"),
  );
}
