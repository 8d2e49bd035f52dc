import type { Probot, ProbotOctokit } from "probot";

const MAX_RATE_LIMIT_RETRIES = 3;

interface ThrottledRequest {
  method: string;
  url: string;
  request: { retryCount: number };
}

interface FactoryInput {
  octokit: ProbotOctokit;
  octokitOptions: {
    throttle?: { enabled?: boolean } & Record<string, unknown>;
    auth?: Record<string, unknown>;
  } & Record<string, unknown>;
  [key: string]: unknown;
}

/**
 * An Octokit for one installation with its own throttle (so one busy installation never delays
 * another) that waits out primary and secondary rate limits a few times instead of dropping the
 * write — Probot's server defaults give up on secondary limits. The "ack" budget is a second
 * Octokit for the same installation, so a 👀 and a permission check never wait behind a job's writes;
 * "reply" a third, for quick answers (refusals, /help, /status), so they neither wait behind a job nor delay a 👀;
 * the "mint" budget asks for the installation's job tokens (its `/app/...` calls carry the App's JWT).
 */
export async function installationOctokit(
  app: Probot,
  installationId: number,
  budget: "work" | "ack" | "reply" | "mint" = "work",
): Promise<ProbotOctokit> {
  const appOctokit = await app.auth();
  const log = app.log.child({ name: "github", installationId });
  const retryLimited = (kind: string) => (retryAfter: number, options: ThrottledRequest) => {
    const again = options.request.retryCount < MAX_RATE_LIMIT_RETRIES;
    log.warn(
      { retryAfter, method: options.method, url: options.url },
      `${kind} rate limit hit; ${again ? `retrying in ${retryAfter} s` : "giving up"}`,
    );
    return again;
  };
  const factory = ({ octokit, octokitOptions, ...authOptions }: FactoryInput) => {
    const Octokit = octokit.constructor as new (options: Record<string, unknown>) => ProbotOctokit;
    return new Octokit({
      ...octokitOptions,
      log,
      throttle: octokitOptions.throttle?.enabled
        ? {
            ...octokitOptions.throttle,
            id: budget === "work" ? String(installationId) : `${installationId}-${budget}`,
            onRateLimit: retryLimited("primary"),
            onSecondaryRateLimit: retryLimited("secondary"),
          }
        : { enabled: false },
      auth: { ...octokitOptions.auth, otherOptions: authOptions, installationId },
    });
  };
  return (await appOctokit.auth({ type: "installation", installationId, factory })) as ProbotOctokit;
}
