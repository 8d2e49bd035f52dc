import { Octokit } from "@octokit/rest";
import type { Job } from "../jobs/job.js";
import { trimOldest } from "../shared/bounded-map.js";
import type { Logger } from "../workflow/deps.js";
import type { JobPorts } from "../workflow/run-job.js";
import type { GrantedToken, TokenGetter } from "../shared/token-getter.js";
import { githubWebUrl, repositoryOnHost } from "./github-host.js";
import { createOctokitPort, type PortOctokit } from "./octokit-port.js";
import { keepAliveFetch } from "./keep-alive-fetch.js";
import { pacing, type SharedGates } from "./pacing.js";
import { ownCommentMatcher, type CommentAuthorship } from "./own-comment.js";

export type { SharedGates };

/** GitHub's pacing and retries without Bottleneck's timer turns; across processes through gates they share (Redis). */
const PacedOctokit = Octokit.plugin(pacing);
const RATE_LIMIT_RETRIES = 3;
/** One pool of keep-alive connections per process, for every Octokit a worker makes. */
const workerFetch = keepAliveFetch();

export interface TokenPortOptions {
  /** api.github.com, or `<protocol>://<GHE_HOST>/api/v3`. */
  baseUrl: string;
  /** https://github.com, or `<protocol>://<GHE_HOST>`: where jobs' repositories are cloned from and pushed to. */
  webUrl: string;
  log: Logger;
  isOwnComment(comment: CommentAuthorship): boolean;
  /** With Redis: GitHub's pacing per installation is shared by every process (`jobs/` makes the gates). */
  sharedGates?: SharedGates | null;
  /** The least time between an installation's writes (1000 ms); notifying writes wait 3×, searches 2×. */
  writeGapMs?: number;
}

/** REST base URL from Probot's own variables, so GitHub Enterprise (and a local double) work. */
export function githubApiUrl(env: { GHE_HOST?: string | undefined; GHE_PROTOCOL: string }): string {
  return env.GHE_HOST ? `${env.GHE_PROTOCOL}://${env.GHE_HOST}/api/v3` : "https://api.github.com";
}

/**
 * A worker's GitHub ports from a job's token alone (no App key): one Octokit per installation and
 * budget, so the acknowledgement's pacing never waits behind a job's writes, and retries and
 * GitHub's rate-limit pacing as the App has them.
 */
export class TokenPorts {
  private readonly octokits = new Map<string, PortOctokit>();
  private readonly shared: SharedGates | null;

  constructor(private readonly options: TokenPortOptions) {
    this.shared = options.sharedGates ?? null;
  }

  /**
   * `token` as handed over, or a getter for it renewed as the job goes (lane work, which may outlast
   * the token's hour): every request and git's `gitToken()` then use the token as it is at that moment.
   * The job came from another process: its repository's URLs are the configured GitHub's, not the job's.
   */
  portsFor(job: Job, token: GrantedToken | TokenGetter): JobPorts {
    const repo = repositoryOnHost(this.options.webUrl, job.repository);
    const port = (budget: "ack" | "reply" | "work") =>
      createOctokitPort({
        octokit:
          typeof token === "function"
            ? this.renewingOctokit(job.installationId, token, budget)
            : this.octokit(job.installationId, token, budget),
        repo,
        number: job.number,
        isOwnComment: this.options.isOwnComment,
      });
    return { ack: port("ack"), reply: port("reply"), work: port("work") };
  }

  /** One job's Octokit whose every request carries the token as it is when the request goes out. */
  private renewingOctokit(installationId: number, token: TokenGetter, budget: string): PortOctokit {
    const rest = pacedOctokit({
      baseUrl: this.options.baseUrl,
      log: this.options.log,
      installationId,
      budget,
      shared: this.shared,
      writeGapMs: this.options.writeGapMs,
    });
    rest.hook.before("request", async (request) => {
      request.headers.authorization = `token ${(await token()).token}`;
    });
    const auth = async () => {
      const { token: current, permissions } = await token();
      return { token: current, permissions };
    };
    return { rest: rest.rest, paginate: rest.paginate, graphql: rest.graphql, auth: auth as PortOctokit["auth"] };
  }

  private octokit(installationId: number, granted: GrantedToken, budget: string): PortOctokit {
    const key = `${installationId}/${budget}/${granted.token}`;
    let octokit = this.octokits.get(key);
    if (!octokit) {
      const rest = pacedOctokit({
        baseUrl: this.options.baseUrl,
        log: this.options.log,
        installationId,
        budget,
        auth: granted.token,
        shared: this.shared,
        writeGapMs: this.options.writeGapMs,
      });
      // The port asks its Octokit for the token (git) and its permissions (workflows); a token Octokit knows only the
      // token.
      octokit = {
        rest: rest.rest,
        paginate: rest.paginate,
        graphql: rest.graphql,
        auth: (async () => ({ token: granted.token, permissions: granted.permissions })) as PortOctokit["auth"],
      };
      this.octokits.set(key, octokit);
      trimOldest(this.octokits, 1_000);
    }
    return octokit;
  }
}

/**
 * An Octokit on one installation's budget with GitHub's pacing and retries, waiting out rate limits a
 * few times (`pacing.ts`): its gaps shared with every process through `shared` when given.
 */
export function pacedOctokit(options: {
  baseUrl: string;
  log: Logger;
  installationId: number;
  budget: string;
  auth?: string;
  shared?: SharedGates | null;
  writeGapMs?: number | undefined;
}): Octokit {
  const { log, installationId } = options;
  const gap = options.writeGapMs ?? 1_000;
  const limited = (kind: string, retryAfter: number, request: { method: string; url: string }, retryCount: number) => {
    log.warn({ retryAfter, method: request.method, url: request.url, installationId }, `${kind} rate limit hit`);
    return retryCount < RATE_LIMIT_RETRIES;
  };
  return new PacedOctokit({
    ...(options.auth ? { auth: options.auth } : {}),
    baseUrl: options.baseUrl,
    userAgent: "blueprint-worker",
    request: { fetch: workerFetch },
    log: {
      debug: () => {},
      info: () => {},
      warn: (message: string) => log.warn({}, message),
      error: (message: string) => log.info({}, message),
    },
    pacing: {
      id: `${installationId}-${options.budget}`,
      onRateLimit: limited,
      gapsMs: { write: gap, notification: 3 * gap, search: 2 * gap },
      ...(options.shared ? { shared: options.shared } : {}),
    },
  });
}

/**
 * The worker's side of a job's token, from the environment: ports from the token alone, for the
 * repository's GitHub, paced through `sharedGates` when Redis shares them (`jobs/token-ports.ts`).
 */
export function tokenPorts(
  env: {
    GHE_HOST?: string | undefined;
    GHE_PROTOCOL: string;
    APP_ID?: number | undefined;
    BLUEPRINT_BOT_NAME: string;
    BLUEPRINT_GITHUB_WRITE_GAP_MS?: number;
  },
  log: Logger,
  sharedGates: SharedGates | null = null,
): TokenPorts {
  return new TokenPorts({
    baseUrl: githubApiUrl(env),
    webUrl: githubWebUrl(env),
    log,
    sharedGates,
    writeGapMs: env.BLUEPRINT_GITHUB_WRITE_GAP_MS ?? 1_000,
    isOwnComment: ownCommentMatcher({ appId: env.APP_ID, botLogin: env.BLUEPRINT_BOT_NAME }),
  });
}
