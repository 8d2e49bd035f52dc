import { statSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { renderPlanComment } from "../../src/github/plan-comment.js";
import { commentSeal } from "../../src/github/state-marker.js";
import { storedThreadState } from "../../src/cli/local-port.js";
import { ThreadStore, type StoredThread } from "../../src/cli/thread-store.js";
import { tempDir } from "../helpers/git-repo.js";
import { samplePlan } from "../helpers/model-server.js";
import { pendingState } from "../helpers/plan-state.js";

const threadHolding = (body: string): StoredThread => ({
  version: 1,
  number: 1,
  title: "t",
  baseBranch: "main",
  requestedBy: "me",
  nextId: 2,
  comments: [
    {
      id: 1,
      body,
      author: "blueprint",
      own: true,
      createdAt: "2026-01-01T00:00:00Z",
      updatedAt: "2026-01-01T00:00:00Z",
    },
  ],
});
const plan = () => pendingState(samplePlan(), { base: { branch: "main", sha: "a".repeat(40) } });

describe("the CLI's state key", () => {
  it("is made once per checkout, readable by its owner only, and kept", () => {
    const store = new ThreadStore(tempDir("cli-key-"));
    const secret = store.stateSecret();
    expect(secret).toMatch(/^[0-9a-f]{64}$/);
    expect(store.stateSecret()).toBe(secret);
    expect(statSync(path.join(store.dir, "state-key")).mode & 0o777).toBe(0o600);
    expect(new ThreadStore(tempDir("cli-key-")).stateSecret()).not.toBe(secret);
  });

  it("reads its own threads, and refuses a thread copied from another checkout", () => {
    const mine = new ThreadStore(tempDir("cli-key-"));
    const other = new ThreadStore(tempDir("cli-key-"));
    const signed = (store: ThreadStore) => renderPlanComment(plan(), commentSeal(store.seal(1), 1));
    expect(storedThreadState(threadHolding(signed(mine)), mine.seal(1)).kind).toBe("found");
    const copied = storedThreadState(threadHolding(signed(other)), mine.seal(1));
    expect(copied.kind === "corrupt" && copied.reason).toMatch(/signature does not match/);
  });
});
