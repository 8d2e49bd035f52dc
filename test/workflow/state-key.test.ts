import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { inspect } from "node:util";
import { describe, expect, it } from "vitest";
import { ConfigError, loadEnv } from "../../src/config/env.js";
import { deriveStateKey, encodeStateMarker, readStateMarker } from "../../src/github/state-marker.js";
import { createWorkflowDeps } from "../../src/app/create-deps.js";
import { safePort } from "../../src/workflow/safe-port.js";
import type { ThreadPort } from "../../src/workflow/ports.js";
import { samplePlan } from "../helpers/model-server.js";
import { pendingState } from "../helpers/plan-state.js";

const quiet = { info: () => {}, warn: () => {}, error: () => {} };
const depsWith = (env: Record<string, string>) =>
  createWorkflowDeps(
    loadEnv({
      BLUEPRINT_SANDBOX: "none",
      BLUEPRINT_WORKDIR: mkdtempSync(path.join(os.tmpdir(), "state-key-")),
      ...env,
    }),
    quiet,
  );
const seal = (key: ReturnType<typeof deriveStateKey>, comment = 5) => ({
  key,
  repository: "octo/repo",
  thread: 3,
  comment,
});
const state = () => pendingState(samplePlan(), { base: { branch: "main", sha: "a".repeat(40) } });

describe("the hidden state's key", () => {
  it("comes from BLUEPRINT_STATE_SECRET when set, else from the App's WEBHOOK_SECRET", () => {
    const fromWebhook = depsWith({ WEBHOOK_SECRET: "the-webhook-secret" });
    const dedicated = depsWith({
      WEBHOOK_SECRET: "the-webhook-secret",
      BLUEPRINT_STATE_SECRET: "a-dedicated-state-secret",
    });
    const marker = encodeStateMarker(state(), seal(deriveStateKey("the-webhook-secret")));
    expect(readStateMarker(marker, seal(fromWebhook.stateKey)).kind).toBe("ok");
    expect(readStateMarker(marker, seal(dedicated.stateKey)).kind).toBe("corrupt");
    expect(
      readStateMarker(
        encodeStateMarker(state(), seal(deriveStateKey("a-dedicated-state-secret"))),
        seal(dedicated.stateKey),
      ).kind,
    ).toBe("ok");
  });

  it("is derived: the deps hold neither secret, and the key does not print", () => {
    const deps = depsWith({ WEBHOOK_SECRET: "the-webhook-secret", BLUEPRINT_STATE_SECRET: "a-dedicated-state-secret" });
    const key = deps.stateKey.export();
    expect(key).toHaveLength(32);
    expect(key.toString("utf8")).not.toContain("secret");
    expect(inspect(deps.stateKey)).not.toContain(key.toString("hex"));
  });

  it("can be handed over already derived, to a process that holds neither secret", () => {
    const key = deriveStateKey("the-webhook-secret");
    const worker = createWorkflowDeps(
      loadEnv({ BLUEPRINT_SANDBOX: "none", BLUEPRINT_WORKDIR: mkdtempSync(path.join(os.tmpdir(), "state-key-")) }),
      quiet,
      [],
      key,
    );
    expect(readStateMarker(encodeStateMarker(state(), seal(key)), seal(worker.stateKey)).kind).toBe("ok");
  });

  it("is required: without either secret the engine does not start, and says what to set", () => {
    expect(() => depsWith({})).toThrow(ConfigError);
    expect(() => depsWith({})).toThrow(/BLUEPRINT_STATE_SECRET/);
    expect(() => loadEnv({ BLUEPRINT_STATE_SECRET: "short" })).toThrow(/at least 16 characters/);
  });
});

describe("safePort and the state marker", () => {
  const key = deriveStateKey("the-webhook-secret");
  const written: Array<{ id: number | null; body: string }> = [];
  const port = safePort(
    {
      repo: { owner: "octo", name: "repo", cloneUrl: "", defaultBranch: "main", htmlUrl: "" },
      number: 3,
      postComment: async (body: string) => {
        written.push({ id: null, body });
        return { id: 9, url: "" };
      },
      updateComment: async (id: number, body: string) => {
        written.push({ id, body });
      },
    } as unknown as ThreadPort,
    (text) => text,
    key,
  );

  it("writes a marker only to the comment it is signed for", async () => {
    await port.updateComment(5, `Plan\n\n${encodeStateMarker(state(), seal(key, 5))}`);
    await expect(port.updateComment(6, `Plan\n\n${encodeStateMarker(state(), seal(key, 5))}`)).rejects.toThrow(
      /refusing to write a state marker to comment 6/,
    );
    expect(written.map((write) => write.id)).toEqual([5]);
  });

  it("neutralises anything marker-like in a new comment (quoted text can never become state)", async () => {
    await port.postComment(`The model asked: ${encodeStateMarker(state(), seal(key, 9))}`);
    expect(written.at(-1)?.body).not.toContain("<!-- blueprint:state");
    expect(written.at(-1)?.body).toContain("&lt;!-- blueprint:state");
  });
});
