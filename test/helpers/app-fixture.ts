import nock from "nock";
import { afterEach, beforeEach } from "vitest";
import type { WorkflowDeps } from "../../src/workflow/deps.js";
import type { ThreadState } from "../../src/workflow/state.js";
import { startTestApp, type TestApp } from "./app.js";
import { createBareRepo, type BareRepo } from "./git-repo.js";
import { githubDouble, type GitHubDouble, type GitHubDoubleOptions } from "./github-double.js";
import { startModelServer, type ModelServer, type Script } from "./model-server.js";
import { decodeState, pendingState, planCommentBody, testSeal } from "./plan-state.js";

/** The state in a Blueprint comment's hidden marker; throws when there is none or it does not decode. */
export function stateOf(body: string): ThreadState {
  return decodeState(body);
}

/** What people see: the comment without its hidden state marker. */
export function visible(body: string): string {
  return body.slice(0, body.indexOf("<!-- blueprint:state"));
}

export interface AppFixtureOptions {
  /**
   * The remote's files on `main`, created before each test; without them, a test makes its repository with
   * `createRepo`.
   */
  files?: Record<string, string>;
  /** Permissions the GitHub double answers (login → permission); `{ maintainer: "write" }` unless given. */
  permissions?: Record<string, string>;
  /** Environment for every app the fixture starts, under `start`'s own. */
  env?: Record<string, string>;
}

export interface StartOptions {
  /** Merged over the fixture's GitHub double options (e.g. a pull request, an issue author, other permissions). */
  github?: GitHubDoubleOptions;
  /** Keep Octokit's retry and throttling on, as in production. */
  githubRetries?: boolean;
  /** Replaces parts of the engine. */
  deps?: Partial<WorkflowDeps>;
}

export interface AppFixture {
  readonly repo: BareRepo;
  readonly github: GitHubDouble;
  readonly model: ModelServer;
  readonly app: TestApp;
  /** Replaces this test's repository with one holding `files`. */
  createRepo(files: Record<string, string>): BareRepo;
  /** Starts GitHub's double, a model server answering `script`, and the app pointed at both. */
  start(script: Script, env?: Record<string, string>, options?: StartOptions): Promise<TestApp>;
  /** A pending plan comment, as /plan would have left it, on the repository's current `main`. */
  seedPlan(plan: unknown, state?: Partial<ThreadState>): ReturnType<GitHubDouble["addBotComment"]>;
  stateOf: typeof stateOf;
  visible: typeof visible;
}

/**
 * The app-level set-up: registers beforeEach/afterEach (network off but for 127.0.0.1, a fresh bare
 * repository, the model server closed afterwards) and gives each test what it started.
 * Call it at the top of a file or a describe block; read `repo`, `github`, `model` and `app` inside tests.
 */
export function useAppFixture(options: AppFixtureOptions = {}): AppFixture {
  let repo: BareRepo | null = null;
  let github: GitHubDouble | null = null;
  let model: ModelServer | null = null;
  let app: TestApp | null = null;

  beforeEach(() => {
    nock.disableNetConnect();
    nock.enableNetConnect("127.0.0.1");
    repo = options.files ? createBareRepo(options.files) : null;
    github = null;
    app = null;
  });

  afterEach(async () => {
    await model?.close();
    model = null;
    nock.cleanAll();
    nock.enableNetConnect();
  });

  const started = <T>(value: T | null, what: string): T => {
    if (value === null)
      throw new Error(`no ${what} yet: ${what === "repo" ? "pass files or call createRepo" : "call start"} first`);
    return value;
  };

  const fixture: AppFixture = {
    get repo() {
      return started(repo, "repo");
    },
    get github() {
      return started(github, "github");
    },
    get model() {
      return started(model, "model");
    },
    get app() {
      return started(app, "app");
    },
    createRepo(files) {
      repo = createBareRepo(files);
      return repo;
    },
    async start(script, env = {}, startOptions = {}) {
      github = githubDouble({ permissions: options.permissions ?? { maintainer: "write" }, ...startOptions.github });
      model = await startModelServer(script);
      app = await startTestApp(
        { OPENAI_BASE_URL: model.url, ...options.env, ...env },
        { githubRetries: startOptions.githubRetries, deps: startOptions.deps },
      );
      return app;
    },
    seedPlan(plan, state = {}) {
      const seeded = pendingState(plan, { base: { branch: "main", sha: fixture.repo.head() }, ...state });
      return fixture.github.addBotComment((id) => planCommentBody(seeded, testSeal(id)));
    },
    stateOf,
    visible,
  };
  return fixture;
}
