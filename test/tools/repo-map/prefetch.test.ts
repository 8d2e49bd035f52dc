import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { promises as fs } from "node:fs";
import os from "node:os";
import path from "node:path";
import { buildRepoMap, prefetchRepoMap } from "../../../src/tools/repo-map/build-map.js";
import { clearTagCache, collectTags } from "../../../src/tools/repo-map/collect-tags.js";
import { commitRepo, sharedAndParts } from "./helpers.js";

let base: string;
let repo: string;
const FILES = 60;

beforeAll(async () => {
  base = await fs.mkdtemp(path.join(os.tmpdir(), "bp-map-prefetch-"));
  repo = await commitRepo(path.join(base, "repo"), sharedAndParts(FILES - 1));
});

afterAll(async () => {
  await fs.rm(base, { recursive: true, force: true });
});

describe("repo_map's tags collected ahead of the first call", () => {
  it("a map asked for while they are collected waits for them instead of parsing the tree again", async () => {
    clearTagCache();
    const reference = await buildRepoMap(repo);
    expect(reference.parsed).toBe(FILES);

    clearTagCache();
    const stop = prefetchRepoMap(repo);
    const map = await buildRepoMap(repo);
    expect(map.parsed).toBe(0);
    expect(map.text).toBe(reference.text);
    await stop();
    // Stopped after it finished: what it collected stays.
    expect((await buildRepoMap(repo)).parsed).toBe(0);
  });

  it("stopped before it is done, it leaves nothing behind and the next map parses everything", async () => {
    clearTagCache();
    const stop = prefetchRepoMap(repo);
    await stop();
    const map = await buildRepoMap(repo);
    expect(map.parsed).toBe(FILES);
    expect(map.text).toMatch(/^Repository map: 60 tracked files/);
  });

  it("a map whose caller gives up while it waits for a running collection stops waiting at once", async () => {
    clearTagCache();
    let firstDone = false;
    const first = collectTags(repo).then(() => (firstDone = true));
    const caller = new AbortController();
    const second = collectTags(repo, caller.signal);
    caller.abort(new Error("the job was cancelled"));
    await expect(second).rejects.toThrow("the job was cancelled");
    // The first needs git and the parser workers: it cannot have finished in the meantime.
    expect(firstDone).toBe(false);
    // A third still waits for the first (not only for the second, which gave up): it parses nothing.
    const third = await collectTags(repo);
    expect(firstDone).toBe(true);
    expect(third.parsed).toBe(0);
    await first;
  });

  it("ends with the job's signal", async () => {
    clearTagCache();
    const job = new AbortController();
    const stop = prefetchRepoMap(repo, undefined, job.signal);
    job.abort();
    // Abandoned, it cached nothing: this map parses every file itself.
    expect((await buildRepoMap(repo)).parsed).toBe(FILES);
    await stop();
  });

  it("a tree that cannot be listed costs the head start only: the map itself reports the failure", async () => {
    clearTagCache();
    const missing = path.join(base, "not-a-repo");
    await fs.mkdir(missing);
    const stop = prefetchRepoMap(missing);
    await expect(stop()).resolves.toBeUndefined();
    await expect(buildRepoMap(missing)).rejects.toThrow(/not a git repository|ls-files/);
  });
});
