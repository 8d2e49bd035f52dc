import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { satisfiesEngines } from "../../scripts/check-node.mjs";
import { HANDLED_EVENTS } from "../../src/jobs/from-webhook.js";

/** README statements a new user acts on in the first hour, checked against the files they describe (issue #15). */

const readme = readFileSync("README.md", "utf8");
const engines = (JSON.parse(readFileSync("package.json", "utf8")) as { engines: { node: string } }).engines.node;

describe("the README's Node statement", () => {
  it("names the same versions as package.json's engines", () => {
    const statement = /Node (\d+\.\d+\.\d+) or newer, Node (\d+) excepted \(`engines` in package\.json: `([^`]+)`/.exec(
      readme,
    );
    expect(statement, "README: Node <x.y.z> or newer, Node <n> excepted (`engines` …)").not.toBeNull();
    const [, floor = "", excepted = "", quoted = ""] = statement ?? [];
    expect(quoted).toBe(engines);
    expect(satisfiesEngines(floor, engines)).toBe(true);
    expect(
      satisfiesEngines(
        floor.replace(/\d+$/, (patch) => String(Number(patch) - 1)),
        engines,
      ),
    ).toBe(false);
    expect(satisfiesEngines(`${excepted}.9.0`, engines)).toBe(false);
    for (const recommended of ["22.0.0", "24.0.0"]) expect(satisfiesEngines(recommended, engines)).toBe(true);
  });

  it("holds for the Node running this suite, and CI checks it before installing", () => {
    expect(satisfiesEngines(process.version, engines), `${process.version} vs ${engines}`).toBe(true);
    const ci = readFileSync(".ci/run", "utf8");
    expect(ci.indexOf("node scripts/check-node.mjs")).toBeGreaterThan(-1);
    expect(ci.indexOf("node scripts/check-node.mjs")).toBeLessThan(ci.indexOf("npm ci"));
    // Says Node 20 is past its end of life, and which dependency warns on it.
    expect(readme).toMatch(/Node 20 is past its end of life/);
    expect(readme).toMatch(/EBADENGINE.*content-type/s);
  });
});

describe("the README and the App manifest", () => {
  it("lists exactly the webhook events app.yml subscribes to", () => {
    const events = (parse(readFileSync("app.yml", "utf8")) as { default_events: string[] }).default_events;
    const listed = /events: ((?:`\w+`(?:, )?)+)/.exec(readme)?.[1]?.match(/\w+/g) ?? [];
    expect(listed.sort()).toEqual([...events].sort());
    // Every subscribed event becomes jobs, and nothing else does.
    expect([...new Set(HANDLED_EVENTS.map((handled) => handled.split(".")[0]))].sort()).toEqual([...events].sort());
  });
});

describe("the Action's status output", () => {
  it("documents every status the runner sets besides the thread's states", () => {
    const runner = readFileSync("src/action/runner.ts", "utf8");
    const set = [...runner.matchAll(/setOutput\("status", "(\w+)"\)/g)].map((match) => match[1] ?? "");
    expect(set).toEqual(expect.arrayContaining(["error", "skipped"]));
    const described = (parse(readFileSync("action.yml", "utf8")) as { outputs: { status: { description: string } } })
      .outputs.status.description;
    for (const status of set) {
      expect(described, status).toContain(status);
      expect(readme, status).toContain(`\`${status}\``);
    }
  });
});
