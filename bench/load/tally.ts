// What the double saw, per installation, against what each command should have left: duplicates,
// unauthorized runs and lost commands, the time to each 👀, and the pacing of GitHub writes.
import type { RecordedRequest } from "../../test/e2e/double/github-server.js";
import type { ModelRequest } from "../../test/helpers/model-server.js";
import type { Command, Delivery, Tenant } from "./conditions.js";
import { classify, expected, hasPlan, type ReplyKind } from "./effects.js";
import { percentile, safeJson } from "./format.js";

/** The double's answered REST calls, sorted by what they did, and the tenant each belongs to. */
export interface Seen {
  requests: RecordedRequest[];
  rest: RecordedRequest[];
  reactions: RecordedRequest[];
  posts: RecordedRequest[];
  patches: RecordedRequest[];
  tenantOf(request: RecordedRequest): Tenant | undefined;
}

export function seenBy(tenants: Tenant[], requests: RecordedRequest[]): Seen {
  const byRepo = new Map(tenants.map((t) => [t.repoPath, t]));
  const rest = requests.filter((r) => r.kind === "rest" && r.status < 400);
  return {
    requests,
    rest,
    reactions: rest.filter((r) => r.method === "POST" && /\/issues\/comments\/\d+\/reactions$/.test(r.path)),
    posts: rest.filter((r) => r.method === "POST" && /\/issues\/\d+\/comments$/.test(r.path)),
    patches: rest.filter((r) => r.method === "PATCH" && /\/issues\/comments\/\d+$/.test(r.path)),
    tenantOf: (r) => byRepo.get(/^\/repos\/[^/]+\/[^/]+/.exec(r.path)?.[0] ?? ""),
  };
}

export const bodyOf = (r: RecordedRequest): string =>
  String((safeJson(r.body) as { body?: unknown } | null)?.body ?? "");
const reactedComment = (r: RecordedRequest) => Number(/\/issues\/comments\/(\d+)\/reactions$/.exec(r.path)?.[1]);
const at = (r: RecordedRequest) => r.at ?? NaN;

/** Model runs: a conversation's first request (no assistant turn yet); its instructions name who asked. */
export function modelRuns(requests: ModelRequest[]): string[] {
  return requests
    .filter((m) => !m.messages.some((message) => message.role === "assistant"))
    .map((m) => String(m.messages.find((message) => message.role === "user")?.content ?? ""))
    .map((text) => /^# Request from @\S+\n\n(\S*)/.exec(text)?.[1] ?? "");
}

export interface Tally {
  duplicates: number;
  lost: number;
  unauthorized: number;
  queued: number;
  problems: string[];
  firstReactionMs: number[];
  /** The first 👀's path per installation: its first webhook → its token minted → the first permission read → the 👀. */
  firstPath: { token: number[]; permission: number[]; reaction: number[] };
  ackMs: number[];
  lastEffectAt: number;
}

export function tally(tenants: Tenant[], deliveries: Delivery[], seen: Seen, runs: string[]): Tally {
  const t: Tally = {
    duplicates: 0,
    lost: 0,
    unauthorized: 0,
    queued: 0,
    problems: [],
    firstReactionMs: [],
    firstPath: { token: [], permission: [], reaction: [] },
    ackMs: [],
    lastEffectAt: 0,
  };
  for (const tenant of tenants) {
    tallyReactions(t, tenant, deliveries, seen);
    tallyReplies(t, tenant, seen);
    tallyModelRuns(t, tenant, runs);
  }
  return t;
}

const note = (t: Tally, line: string) => t.problems.length < 12 && t.problems.push(line);

/** Reactions: exactly one 👀 per writer command, none on readers' or bots' commands; and how soon the first came. */
function tallyReactions(t: Tally, tenant: Tenant, deliveries: Delivery[], seen: Seen): void {
  const mine = (list: RecordedRequest[]) => list.filter((r) => seen.tenantOf(r) === tenant);
  const myReactions = mine(seen.reactions);
  const sentTimes = (keep: (d: Delivery) => boolean) =>
    deliveries.filter((d) => keep(d) && d.sentAt !== undefined).map((d) => d.sentAt ?? NaN);
  const firstSent = (command: Command) => Math.min(...sentTimes((d) => d.command === command));
  for (const command of tenant.commands) {
    const on = myReactions.filter((r) => reactedComment(r) === command.comment.id);
    const [first] = on;
    if (command.who !== "writer") {
      if (on.length > 0) {
        t.unauthorized++;
        note(t, `installation ${tenant.id}: 👀 on a ${command.who}'s /${command.kind}`);
      }
    } else if (!first) {
      t.lost++;
      note(t, `installation ${tenant.id}: no 👀 on ${command.kind} by a writer`);
    } else {
      t.duplicates += on.length - 1;
      if (on.length > 1) note(t, `installation ${tenant.id}: ${on.length} reactions on one ${command.kind}`);
      t.ackMs.push(at(first) - firstSent(command));
      t.lastEffectAt = Math.max(t.lastEffectAt, at(first));
    }
  }
  const ackable = tenant.commands.filter((c) => c.who === "writer").map(firstSent);
  if (myReactions.length > 0 && ackable.length > 0)
    t.firstReactionMs.push(Math.min(...myReactions.map(at)) - Math.min(...ackable));
  const firstAt = (list: RecordedRequest[]) => Math.min(...list.map(at));
  const webhookAt = Math.min(...sentTimes((d) => d.command.installation === tenant.id));
  const tokenAt = firstAt(
    seen.requests.filter((r) => r.kind === "rest" && r.path === `/app/installations/${tenant.id}/access_tokens`),
  );
  const permissionAt = firstAt(
    mine(seen.rest).filter((r) => r.method === "GET" && /\/collaborators\/[^/]+\/permission$/.test(r.path)),
  );
  const reactionAt = firstAt(myReactions);
  if ([webhookAt, tokenAt, permissionAt, reactionAt].every(Number.isFinite)) {
    t.firstPath.token.push(tokenAt - webhookAt);
    t.firstPath.permission.push(permissionAt - tokenAt);
    t.firstPath.reaction.push(reactionAt - permissionAt);
  }
}

/** Replies by kind: as many as commands, no more; each issue ends with its last /plan's revision. */
function tallyReplies(t: Tally, tenant: Tenant, seen: Seen): void {
  const want = expected(tenant);
  const mine = (list: RecordedRequest[]) => list.filter((r) => seen.tenantOf(r) === tenant);
  const replies = [
    ...mine(seen.posts).map((r) => ({ kind: classify(bodyOf(r)) as ReplyKind | "patch", at: at(r), body: bodyOf(r) })),
    ...mine(seen.patches).map((r) => ({ kind: "patch" as const, at: at(r), body: bodyOf(r) })),
  ];
  const check = (kind: ReplyKind, wanted: number) => {
    const got = replies.filter((reply) => reply.kind === kind).sort((a, b) => a.at - b.at);
    if (got.length < wanted) {
      t.lost += wanted - got.length;
      note(t, `installation ${tenant.id}: ${got.length} of ${wanted} ${kind} replies`);
    }
    if (got.length > wanted) {
      t.duplicates += got.length - wanted;
      note(t, `installation ${tenant.id}: ${got.length} ${kind} replies for ${wanted} commands`);
    }
    const last = got[Math.min(wanted, got.length) - 1];
    if (last) t.lastEffectAt = Math.max(t.lastEffectAt, last.at);
  };
  check("status", want.status);
  check("refusal", want.refusals);
  check("plan-start", want.plans);
  t.queued += replies.filter((r) => r.kind === "queued").length;
  for (const [issue, revision] of want.finalRevision) {
    const done = replies
      .filter((reply) => reply.body.startsWith(`## 📋 Plan v${revision}`))
      .sort((a, b) => a.at - b.at)[0];
    if (
      !done ||
      !hasPlan(
        tenant.view.state.botComments(issue).map((c) => c.body),
        revision,
      )
    ) {
      t.lost++;
      note(t, `installation ${tenant.id}: no Plan v${revision} on #${issue}`);
    } else t.lastEffectAt = Math.max(t.lastEffectAt, done.at);
  }
  for (const reply of replies.filter((r) => r.kind === "failure" || r.kind === "other"))
    note(t, `installation ${tenant.id}: unexpected reply: ${reply.body.slice(0, 100)}`);
}

/**
 * Model runs: one per writer's /plan, none for the reader's or the bot's. A later /plan on an issue
 * revises its plan, and the conversation still opens with the first request's words: count per issue.
 */
function tallyModelRuns(t: Tally, tenant: Tenant, runs: string[]): void {
  const runsFor = (marker: string) => runs.filter((instructions) => instructions.startsWith(marker)).length;
  for (const [issue, plans] of expected(tenant).finalRevision) {
    const legit = runsFor(`load-${tenant.id}-${issue}-`);
    if (legit > plans) {
      t.duplicates += legit - plans;
      note(t, `installation ${tenant.id}: ${legit} model runs for ${plans} /plan on #${issue}`);
    }
  }
  for (const marker of [`ro-${tenant.id}:`, `bot-${tenant.id}:`]) {
    const wrong = runsFor(marker);
    if (wrong > 0) {
      t.unauthorized += wrong;
      note(t, `installation ${tenant.id}: a model run for ${marker}`);
    }
  }
}

/** Pacing of GitHub writes: per installation versus overall. */
export function pacing(requests: RecordedRequest[]) {
  const writes = requests.filter((r) => r.kind === "rest" && r.method !== "GET" && r.installationId !== undefined);
  const perInstallation = new Map<number, number[]>();
  for (const w of writes) {
    const id = w.installationId ?? 0;
    perInstallation.set(id, [...(perInstallation.get(id) ?? []), at(w)]);
  }
  const maxInOneSecond = (times: number[]) => {
    const sorted = [...times].sort((a, b) => a - b);
    let best = 0;
    for (let i = 0, j = 0; i < sorted.length; i++) {
      while ((sorted[i] ?? 0) - (sorted[j] ?? 0) >= 1000) j++;
      best = Math.max(best, i - j + 1);
    }
    return best;
  };
  const gaps: number[] = [];
  for (const times of perInstallation.values()) {
    const sorted = [...times].sort((a, b) => a - b);
    for (let i = 1; i < sorted.length; i++) gaps.push((sorted[i] ?? 0) - (sorted[i - 1] ?? 0));
  }
  return {
    writes: writes.length,
    medianGap: percentile(gaps, 50),
    minGap: Math.min(...gaps),
    perInstallationPeak: Math.max(0, ...[...perInstallation.values()].map(maxInOneSecond)),
    overallPeak: maxInOneSecond(writes.map(at)),
  };
}
