// Who comments what, where, and in which order: issue #11's 1000 webhooks over 100 installations,
// typed on the GitHub double before the clock starts, and the scripted model's answers.
import { randomUUID } from "node:crypto";
import type { GitHubDouble } from "../../test/e2e/double/github-server.js";
import type { CommentRecord, RepositoryRole } from "../../test/e2e/double/state.js";
import { issueCommentCreated, signWebhook } from "../../test/e2e/double/webhooks.js";
import type { ModelRequest, ScriptedReply } from "../../test/helpers/model-server.js";
import { FIRST_INSTALLATION_ID, INSTALLATIONS, SIX_PLANS, TWO_ISSUES, WEBHOOK_SECRET } from "./config.js";

export const FILES = {
  "README.md": "# greeter\n\nPrints a greeting.\n",
  "package.json": '{ "name": "greeter", "version": "1.0.0", "type": "module" }\n',
  "src/index.js": 'console.log("Hello, world!");\n',
};
const PLAN = {
  title: "Greet people by name",
  summary: "Add a greet helper and use it in the entry point.",
  steps: [
    {
      id: "S1",
      title: "Add a greet helper",
      details: "Create `src/greet.js` exporting `greet(name)`.",
      files: ["src/greet.js"],
      deps: [],
      risk: null,
      complexity: "low",
    },
  ],
  risks: [],
  verification: ["test -f src/greet.js"],
};

/** Who comments: role on every installation's repository (the bot is not a collaborator). */
export const PEOPLE: Record<string, RepositoryRole> = {
  maintainer: "write",
  owner: "admin",
  reader: "read",
  triager: "triage",
};
const BOT = "dependabot[bot]";

export type Who = "writer" | "reader" | "bot";
export type Kind = "plan" | "help" | "status" | "cancel";
export interface Command {
  installation: number;
  issue: number;
  index: number;
  who: Who;
  kind: Kind;
  comment: CommentRecord;
  /** Webhook body and signature, made before the clock starts. */
  body: string;
  signature: string;
}
export interface Delivery {
  command: Command;
  deliveryId: string;
  redelivery: "none" | "same-delivery";
  sentAt?: number;
  latencyMs?: number;
  status?: number;
}
export interface Tenant {
  id: number;
  view: GitHubDouble;
  issues: number[];
  repoPath: string;
  commands: Command[];
}

export const installationIds = (): number[] =>
  Array.from({ length: INSTALLATIONS }, (_, n) => FIRST_INSTALLATION_ID + n);
export const ownerOf = (id: number): string => `org-${id}`;
export const issuesFor = (id: number) =>
  Array.from({ length: id - FIRST_INSTALLATION_ID < TWO_ISSUES ? 2 : 1 }, (_, n) => ({
    title: `Greet people by name (installation ${id}, #${n + 1})`,
    body: "The CLI always says hello to the world.",
    author: "maintainer",
  }));

/** The scripted model: planning reads package.json, then submits its plan; anything else gets a short answer. */
export function modelReply(request: ModelRequest): ScriptedReply {
  if (!request.tools?.some((tool) => tool.function.name === "submit_plan")) return { content: "Noted." };
  const turn = request.messages.filter((message) => message.role === "assistant").length;
  if (turn === 0)
    return {
      toolCalls: [{ name: "read_file", arguments: { path: "package.json", start_line: null, end_line: null } }],
    };
  return { toolCalls: [{ name: "submit_plan", arguments: PLAN }] };
}

/**
 * Everyone's commands: 810 writer /plan over the 150 issues (60 issues get six, 90 get five), 20
 * writer /status (each delivered 3× with one delivery id), 80 read-only users' /plan, 50 bots' /plan.
 */
export function makeTenants(github: GitHubDouble, ids: number[]): Tenant[] {
  const tenants: Tenant[] = ids.map((id) => {
    const view = github.installation(id);
    return {
      id,
      view,
      issues: id - FIRST_INSTALLATION_ID < TWO_ISSUES ? [1, 2] : [1],
      repoPath: `/repos/${view.repository.owner}/${view.repository.name}`,
      commands: [],
    };
  });
  const add = (tenant: Tenant, issue: number, who: Who, kind: Kind, login: string, body: string) => {
    const { view } = tenant;
    const comment =
      who === "bot"
        ? view.state.addComment(issue, { login, type: "Bot" }, body, false)
        : view.state.addUserComment(issue, login, body);
    const payload = JSON.stringify(issueCommentCreated(view, comment).payload);
    tenant.commands.push({
      installation: tenant.id,
      issue,
      index: tenant.commands.length,
      who,
      kind,
      comment,
      body: payload,
      signature: signWebhook(WEBHOOK_SECRET, payload),
    });
  };
  const issues = tenants.flatMap((tenant) => tenant.issues.map((issue) => ({ tenant, issue })));
  issues.forEach(({ tenant, issue }, n) => {
    for (let k = 0; k < (n < SIX_PLANS ? 6 : 5); k++)
      add(
        tenant,
        issue,
        "writer",
        "plan",
        k % 2 === 0 ? "maintainer" : "owner",
        `/plan load-${tenant.id}-${issue}-${k}: greet people by name`,
      );
  });
  tenants.slice(0, 20).forEach((tenant) => add(tenant, 1, "writer", "status", "maintainer", "/status"));
  tenants
    .slice(20)
    .forEach((tenant) => add(tenant, 1, "reader", "plan", "reader", `/plan ro-${tenant.id}: let me plan too`));
  tenants
    .slice(0, 50)
    .forEach((tenant) =>
      add(tenant, tenant.issues.at(-1) ?? 1, "bot", "plan", BOT, `/plan bot-${tenant.id}: bump dependencies`),
    );
  return tenants;
}

/**
 * Each installation's webhooks, shuffled, the /status ones twice more with the same
 * X-GitHub-Delivery after their original; installations interleaved at random, each keeping its order.
 */
export function schedule(tenants: Tenant[]): Delivery[] {
  const random = prng(7);
  const lanes = tenants.map((tenant) => {
    const originals: Delivery[] = shuffle(tenant.commands, random).map((command) => ({
      command,
      deliveryId: randomUUID(),
      redelivery: "none",
    }));
    for (const status of originals.filter((d) => d.command.kind === "status")) {
      for (let again = 0; again < 2; again++) {
        const at = originals.indexOf(status);
        originals.splice(at + 1 + Math.floor(random() * (originals.length - at)), 0, {
          command: status.command,
          deliveryId: status.deliveryId,
          redelivery: "same-delivery",
        });
      }
    }
    return originals;
  });
  const order: Delivery[] = [];
  let left = lanes.reduce((sum, lane) => sum + lane.length, 0);
  while (left > 0) {
    let pick = Math.floor(random() * left);
    const lane = lanes.find((candidate) => (pick -= candidate.length) < 0);
    const next = lane?.shift();
    if (next) order.push(next);
    left--;
  }
  return order;
}

/** What the burst holds, for the report's first line. */
export function totalsOf(tenants: Tenant[], deliveries: Delivery[]) {
  return {
    webhooks: deliveries.length,
    commands: tenants.reduce((sum, t) => sum + t.commands.length, 0),
    writer: count(tenants, (c) => c.who === "writer"),
    plans: count(tenants, (c) => c.who === "writer" && c.kind === "plan"),
    reader: count(tenants, (c) => c.who === "reader"),
    bot: count(tenants, (c) => c.who === "bot"),
    sameDelivery: deliveries.filter((d) => d.redelivery === "same-delivery").length,
    issues: tenants.reduce((sum, t) => sum + t.issues.length, 0),
  };
}
export type Totals = ReturnType<typeof totalsOf>;

function count(tenants: Tenant[], predicate: (command: Command) => boolean): number {
  return tenants.reduce((sum, tenant) => sum + tenant.commands.filter(predicate).length, 0);
}

function shuffle<T>(items: T[], random: () => number): T[] {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [copy[i], copy[j]] = [copy[j] as T, copy[i] as T];
  }
  return copy;
}

function prng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
