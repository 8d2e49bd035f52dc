import { describe, expect, it } from "vitest";
import { atLeast, toPermissionLevel, PERMISSION_LEVELS } from "../../src/github/permission.js";

describe("atLeast", () => {
  it("orders the levels none < read < triage < write < maintain < admin", () => {
    expect(PERMISSION_LEVELS).toEqual(["none", "read", "triage", "write", "maintain", "admin"]);
  });

  it("allows the minimum and everything above it", () => {
    expect(atLeast("write", "write")).toBe(true);
    expect(atLeast("maintain", "write")).toBe(true);
    expect(atLeast("admin", "write")).toBe(true);
  });

  it("refuses everything below the minimum", () => {
    expect(atLeast("triage", "write")).toBe(false);
    expect(atLeast("read", "write")).toBe(false);
    expect(atLeast("none", "read")).toBe(false);
    expect(atLeast("write", "admin")).toBe(false);
  });
});

describe("toPermissionLevel", () => {
  it("prefers role_name, which distinguishes maintain and triage", () => {
    expect(toPermissionLevel({ permission: "write", role_name: "maintain" })).toBe("maintain");
    expect(toPermissionLevel({ permission: "read", role_name: "triage" })).toBe("triage");
  });

  it("is case-insensitive", () => {
    expect(toPermissionLevel({ role_name: "Admin" })).toBe("admin");
    expect(toPermissionLevel({ permission: "WRITE" })).toBe("write");
  });

  it("falls back to the legacy permission for custom or missing role names", () => {
    expect(toPermissionLevel({ permission: "write", role_name: "security-reviewer" })).toBe("write");
    expect(toPermissionLevel({ permission: "admin", role_name: null })).toBe("admin");
    expect(toPermissionLevel({ permission: "read" })).toBe("read");
  });

  it("treats unknown or missing answers as none", () => {
    expect(toPermissionLevel({})).toBe("none");
    expect(toPermissionLevel({ permission: "superuser", role_name: "owner" })).toBe("none");
    expect(toPermissionLevel({ permission: null, role_name: null })).toBe("none");
  });
});
