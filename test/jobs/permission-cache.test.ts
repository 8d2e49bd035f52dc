import { describe, expect, it } from "vitest";
import { PermissionCache } from "../../src/jobs/permission-cache.js";
import { Claims } from "../../src/jobs/store/memory.js";
import type { PermissionLevel } from "../../src/github/permission.js";

describe("PermissionCache", () => {
  it("asks GitHub once per person and repository while the answer is fresh, sharing a call in flight", async () => {
    let calls = 0;
    const lookUp = async (): Promise<PermissionLevel> => {
      calls++;
      return "write";
    };
    const cache = new PermissionCache(30_000);
    const [a, b] = await Promise.all([cache.get("o/r", "Mona", lookUp), cache.get("o/r", "mona", lookUp)]);
    expect([a, b]).toEqual(["write", "write"]);
    expect(calls).toBe(1);
    await cache.get("o/other", "mona", lookUp);
    await cache.get("o/r", "hubot", lookUp);
    expect(calls).toBe(3);
  });

  it("asks again once the answer is older than its time to live, so a revoked permission takes effect", async () => {
    let now = 0;
    const answers: PermissionLevel[] = ["write", "read"];
    const cache = new PermissionCache(30_000, 100, () => now);
    const lookUp = async () => answers.shift()!;
    expect(await cache.get("o/r", "mona", lookUp)).toBe("write");
    now = 29_999;
    expect(await cache.get("o/r", "mona", lookUp)).toBe("write");
    now = 30_000;
    expect(await cache.get("o/r", "mona", lookUp)).toBe("read");
  });

  it("does not remember a failed look-up", async () => {
    const cache = new PermissionCache();
    await expect(cache.get("o/r", "mona", async () => Promise.reject(new Error("502")))).rejects.toThrow("502");
    expect(await cache.get("o/r", "mona", async () => "admin")).toBe("admin");
  });

  it("keeps at most its capacity of entries", async () => {
    let calls = 0;
    const cache = new PermissionCache(30_000, 2);
    const lookUp = async (): Promise<PermissionLevel> => (calls++, "write");
    for (const login of ["a", "b", "c", "a"]) await cache.get("o/r", login, lookUp);
    expect(calls).toBe(4); // "a" was pushed out by "c"
  });
});

describe("the memory store's claims", () => {
  it("claims a set of keys only when none was seen, and a released claim can be made again", () => {
    const recent = new Claims();
    expect(recent.claim(["delivery:1", "comment:7"])).toBe(true);
    expect(recent.claim(["delivery:2", "comment:7"])).toBe(false);
    expect(recent.claim(["delivery:2"])).toBe(true); // the refused claim marked nothing
    recent.release(["delivery:1", "comment:7"]);
    expect(recent.claim(["delivery:1", "comment:7"])).toBe(true);
  });

  it("forgets the oldest keys beyond its capacity", () => {
    const recent = new Claims(2);
    for (const key of ["a", "b", "c"]) expect(recent.claim([key])).toBe(true);
    expect(recent.claim(["a"])).toBe(true); // pushed out by "c"
    expect(recent.claim(["c"])).toBe(false);
  });
});
