import { describe, expect, it } from "vitest";
import { DEFAULT_REPO_CONFIG } from "../../src/config/repo-config.js";
import { codeOwnersRefusal } from "../../src/workflow/approval/codeowners.js";
import { ownerMatcher } from "../../src/workflow/approval/code-owner-coverage.js";
import { parseCodeOwners } from "../../src/github/codeowners.js";
import type { Plan } from "../../src/plan/schema.js";
import type { ThreadState } from "../../src/workflow/state.js";
import type { PermissionLevel } from "../../src/github/permission.js";
import type { GitHubAccount, ThreadPort } from "../../src/workflow/ports.js";
import { pendingState } from "../helpers/plan-state.js";
import { samplePlan } from "../helpers/model-server.js";

const state = pendingState(
  samplePlan({
    steps: [
      { id: "S1", title: "Helper", details: "", files: ["src/retry.js"], deps: [] },
      { id: "S2", title: "Docs", details: "", files: ["docs/guide.md"], deps: [] },
    ],
  }),
);
/** The validated plan of a state pendingState made (it always has one). */
function planOf(pending: ThreadState): Plan {
  if (!pending.plan) throw new Error("pendingState made a state without a plan");
  return pending.plan;
}

const plan = planOf(state);
const codeowners = { ...DEFAULT_REPO_CONFIG, approvers: "codeowners" as const };

/**
 * The port's members the check uses; team members by `org/slug`, or an error to throw; accounts by login; each
 * person's access to the repository (write unless named).
 */
function portWith(
  teams: Record<string, string[] | Error> = {},
  accounts: Record<string, GitHubAccount | Error> = {},
  permissions: Record<string, PermissionLevel | Error> = {},
): ThreadPort {
  const asked: string[] = [];
  const port = {
    repo: { owner: "o", name: "r", cloneUrl: "", defaultBranch: "main", htmlUrl: "" },
    asked,
    async teamMember(org: string, slug: string, login: string) {
      asked.push(`${org}/${slug}:${login}`);
      const members = teams[`${org}/${slug}`];
      if (members instanceof Error) throw members;
      return members?.includes(login) ?? false;
    },
    async permission(login: string) {
      const level = permissions[login.toLowerCase()] ?? "write";
      if (level instanceof Error) throw level;
      return level;
    },
    async account(login: string) {
      asked.push(`account:${login}`);
      const account = accounts[login];
      if (account instanceof Error) throw account;
      return account ?? null;
    },
  };
  return port as unknown as ThreadPort;
}

function files(map: Record<string, string>) {
  return async (file: string) => map[file] ?? null;
}

describe("codeOwnersRefusal", () => {
  it("is off unless the repository asks for code owners", async () => {
    const read = async (): Promise<string | null> => {
      throw new Error("must not read CODEOWNERS");
    };
    expect(
      await codeOwnersRefusal(portWith(), DEFAULT_REPO_CONFIG, {
        approver: "x",
        plan,
        state,
        steps: [],
        readDefaultBranch: read,
      }),
    ).toBeNull();
  });

  it("reads .github/CODEOWNERS before CODEOWNERS and docs/CODEOWNERS, as GitHub does", async () => {
    const read = files({
      ".github/CODEOWNERS": "* @alice\n",
      CODEOWNERS: "* @mallory\n",
      "docs/CODEOWNERS": "* @mallory\n",
    });
    expect(
      await codeOwnersRefusal(portWith(), codeowners, {
        approver: "alice",
        plan,
        state,
        steps: [],
        readDefaultBranch: read,
      }),
    ).toBeNull();
    const refusal = await codeOwnersRefusal(portWith(), codeowners, {
      approver: "mallory",
      plan,
      state,
      steps: [],
      readDefaultBranch: read,
    });
    expect(refusal).toContain("per `.github/CODEOWNERS` on `main`");
    expect(
      await codeOwnersRefusal(portWith(), codeowners, {
        approver: "mallory",
        plan,
        state,
        steps: [],
        readDefaultBranch: files({ "docs/CODEOWNERS": "* @mallory\n" }),
      }),
    ).toBeNull();
  });

  it("matches logins without regard to case", async () => {
    expect(
      await codeOwnersRefusal(portWith(), codeowners, {
        approver: "ALICE",
        plan,
        state,
        steps: [],
        readDefaultBranch: files({ CODEOWNERS: "* @Alice\n" }),
      }),
    ).toBeNull();
  });

  it("needs no code owner for a step whose files nobody owns, and none for steps already done", async () => {
    const read = files({ CODEOWNERS: "/src/ @alice\n/docs/ @writer\n/docs/guide.md\n" });
    expect(
      await codeOwnersRefusal(portWith(), codeowners, {
        approver: "alice",
        plan,
        state,
        steps: [],
        readDefaultBranch: read,
      }),
    ).toBeNull();
    const done = { ...state, steps: { S1: { status: "done" as const }, S2: { status: "pending" as const } } };
    expect(
      await codeOwnersRefusal(portWith(), codeowners, {
        approver: "writer",
        plan,
        state: done,
        steps: [],
        readDefaultBranch: files({ CODEOWNERS: "/src/ @alice\n/docs/ @writer\n" }),
      }),
    ).toBeNull();
  });

  it("checks only the steps named and what they depend on", async () => {
    const read = files({ CODEOWNERS: "/src/ @alice\n/docs/ @writer\n" });
    expect(
      await codeOwnersRefusal(portWith(), codeowners, {
        approver: "writer",
        plan,
        state,
        steps: ["S2"],
        readDefaultBranch: read,
      }),
    ).toBeNull();
    expect(
      await codeOwnersRefusal(portWith(), codeowners, {
        approver: "writer",
        plan,
        state,
        steps: [],
        readDefaultBranch: read,
      }),
    ).toContain("- **S1** Helper: `src/retry.js` (@alice)");
  });

  it("says when GitHub would not tell whether the approver is in a team, and does not count it", async () => {
    const port = portWith({ "org/core": new Error("Resource not accessible by integration") });
    const refusal = await codeOwnersRefusal(port, codeowners, {
      approver: "bob",
      plan,
      state,
      steps: [],
      readDefaultBranch: files({ CODEOWNERS: "* @org/core\n" }),
    });
    expect(refusal).toContain(
      "Blueprint could not check membership of @org/core (Resource not accessible by integration.)",
    );
    expect((port as unknown as { asked: string[] }).asked).toEqual(["org/core:bob"]);
  });

  it("counts a code owner only with write access to the repository, as GitHub does, and says so", async () => {
    const read = files({ CODEOWNERS: "* @alice @org/core\n" });
    const approve = (approver: string, port: ThreadPort) =>
      codeOwnersRefusal(port, codeowners, { approver, plan, state, steps: [], readDefaultBranch: read });
    // Named in CODEOWNERS, but with read (or triage) access only: their approval does not count.
    for (const level of ["read", "triage"] as const) {
      const refusal = await approve("alice", portWith({}, {}, { alice: level }));
      expect(refusal).toContain("@alice owns no file of these steps");
      expect(refusal).toContain(
        `As on GitHub, a code owner's approval counts only with write access to the repository, which @alice (${level}) does not have.`,
      );
    }
    // A team owner's member too; with write, maintain or admin access they count.
    const member = portWith({ "org/core": ["bob"] }, {}, { bob: "read" });
    expect(await approve("bob", member)).toContain("which @bob (read) does not have");
    for (const level of ["write", "maintain", "admin"] as const)
      expect(await approve("alice", portWith({}, {}, { alice: level }))).toBeNull();
    // An earlier approval recorded by an owner who has since lost write access no longer covers the files.
    const recorded = { ...state, approvals: [{ login: "alice", via: "build" as const, at: null }] };
    const refusal = await codeOwnersRefusal(portWith({}, {}, { alice: "read" }), codeowners, {
      approver: "mallory",
      plan,
      state: recorded,
      steps: [],
      readDefaultBranch: read,
    });
    expect(refusal).toContain("which @alice (read) does not have");
    // Access GitHub would not tell counts as none, said as such.
    const unknown = await approve("alice", portWith({}, {}, { alice: new Error("Bad credentials") }));
    expect(unknown).toContain("Blueprint could not check @alice's access to the repository (Bad credentials.)");
    expect(unknown).not.toContain("As on GitHub");
  });

  it("adds up the approvals the state records with this one, file by file", async () => {
    const read = files({ CODEOWNERS: "/src/ @alice\n/docs/ @writer\n" });
    expect(
      await codeOwnersRefusal(portWith(), codeowners, {
        approver: "alice",
        plan,
        state,
        steps: [],
        readDefaultBranch: read,
      }),
    ).toContain("@alice's approval is recorded, but");
    const approved = { ...state, approvals: [{ login: "writer", via: "build" as const, at: null }] };
    expect(
      await codeOwnersRefusal(portWith(), codeowners, {
        approver: "alice",
        plan,
        state: approved,
        steps: [],
        readDefaultBranch: read,
      }),
    ).toBeNull();
  });

  it("needs an owner's approval for each owned file a step lists, not for one of them", async () => {
    const both = pendingState(
      samplePlan({
        steps: [{ id: "S1", title: "Both", details: "", files: ["src/retry.js", "docs/guide.md"], deps: [] }],
      }),
    );
    const refusal = await codeOwnersRefusal(portWith(), codeowners, {
      approver: "alice",
      plan: planOf(both),
      state: both,
      steps: [],
      readDefaultBranch: files({ CODEOWNERS: "/src/ @alice\n/docs/ @writer\n" }),
    });
    expect(refusal).toContain("- **S1** Both: `docs/guide.md` (@writer)");
    expect(refusal).not.toContain("`src/retry.js` (");
  });
});

describe("ownerMatcher: owners named by e-mail", () => {
  const owners = (line: string) => parseCodeOwners(`* ${line}\n`).rules[0]?.owners ?? [];
  const erin: GitHubAccount = { login: "Erin", id: 5, email: "erin@example.com" };

  it("matches the account's public e-mail and its two noreply addresses, whatever their case", async () => {
    for (const email of ["ERIN@example.com", "5+erin@users.noreply.github.com", "erin@users.noreply.github.com"]) {
      expect(await ownerMatcher(portWith({}, { erin })).owns("erin", owners(email))).toBe(true);
    }
  });

  it("matches no other address: another id's noreply, another person's e-mail, or a private one GitHub does not show", async () => {
    const hidden = { ...erin, email: null };
    for (const email of ["6+erin@users.noreply.github.com", "mallory@example.com"])
      expect(await ownerMatcher(portWith({}, { erin })).owns("erin", owners(email))).toBe(false);
    expect(await ownerMatcher(portWith({}, { erin: hidden })).owns("erin", owners("erin@example.com"))).toBe(false);
    expect(await ownerMatcher(portWith()).owns("erin", owners("erin@example.com"))).toBe(false);
  });

  it("asks for an account once, and says when GitHub would not show it", async () => {
    const port = portWith({}, { erin: new Error("API rate limit exceeded") });
    const matcher = ownerMatcher(port);
    expect(await matcher.owns("erin", owners("a@example.com b@example.com"))).toBe(false);
    expect(await matcher.owns("erin", owners("c@example.com"))).toBe(false);
    expect((port as unknown as { asked: string[] }).asked).toEqual(["account:erin"]);
    expect(matcher.unchecked()).toEqual(["@erin's public e-mail (API rate limit exceeded.)"]);
  });
});
