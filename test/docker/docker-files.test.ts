import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { promisify } from "node:util";
import picomatch from "picomatch";
import { describe, expect, it } from "vitest";
import { createRedactor } from "../../src/agent/redact.js";
import { envSchema, loadEnv } from "../../src/config/env.js";

const dockerfile = readFileSync("Dockerfile", "utf8");
/** Instructions with their continuation lines joined, comments dropped. */
const instructions = dockerfile
  .replace(/\\\n\s*/g, " ")
  .split("\n")
  .map((line) => line.trim())
  .filter((line) => line !== "" && !line.startsWith("#"));
const stages = instructions
  .join("\n")
  .split(/^FROM /m)
  .slice(1);
const ignored = readFileSync(".dockerignore", "utf8")
  .split("\n")
  .map((line) => line.trim())
  .filter((line) => line && !line.startsWith("#"));

/** Whether .dockerignore keeps `file` out of the build context: the last pattern matching it or a folder above wins. */
function dockerIgnores(file: string): boolean {
  const paths = file.split("/").map((_, n, parts) => parts.slice(0, n + 1).join("/"));
  return ignored.reduce((out, line) => {
    const pattern = line.replace(/^!/, "");
    return paths.some((candidate) => picomatch.isMatch(candidate, pattern, { dot: true }))
      ? !line.startsWith("!")
      : out;
  }, false);
}
const exampleText = readFileSync(".env.example", "utf8");
const run = promisify(execFile);

describe("Dockerfile", () => {
  it("builds in one stage and runs lib/ with production dependencies in another", () => {
    expect(stages).toHaveLength(2);
    const [build = "", runtime = ""] = stages;
    expect(build).toMatch(/^node:(20|24)-slim AS build/);
    expect(build).toContain("RUN npm ci\n");
    expect(build).toContain("RUN npm run build");
    // The build's own script is in the image before it runs.
    const buildScript = (JSON.parse(readFileSync("package.json", "utf8")).scripts.build as string).split(" ")[1];
    expect(build).toContain(`COPY ${buildScript} ./scripts/\n`);
    expect(build.indexOf(`COPY ${buildScript}`)).toBeLessThan(build.indexOf("RUN npm run build"));
    expect(runtime).toMatch(/^node:(20|24)-slim AS runtime/);
    expect(runtime).toContain("npm ci --omit=dev");
    expect(runtime).toContain("COPY --from=build /app/lib ./lib");
    expect(runtime).toContain("COPY app.yml ./");
    expect(runtime).toMatch(/apt-get install -y --no-install-recommends git ca-certificates/);
  });

  it("serves on 0.0.0.0:3000 as a non-root user, in production mode", () => {
    const runtime = stages[1] ?? "";
    expect(runtime).toMatch(/ENV [^\n]*NODE_ENV=production/);
    expect(runtime).toMatch(/ENV [^\n]*HOST=0\.0\.0\.0/);
    expect(runtime).toContain("EXPOSE 3000");
    const user = /^USER (\S+)/m.exec(runtime)?.[1];
    expect(user).toBeDefined();
    expect(user).not.toMatch(/^(root|0)$/);
    expect(dockerfile).not.toMatch(/\bcurl\b|\bwget\b/);
  });

  it("starts as `npm start` does, and lets setup mode write .env into the node-owned volume", () => {
    const runtime = stages[1] ?? "";
    // The same node, flags and entry (the intake's larger young generation: see docs/operations.md, "Node's flags").
    const start = (JSON.parse(readFileSync("package.json", "utf8")).scripts.start as string).split(" ");
    expect(start).toEqual(["node", "--max-semi-space-size=64", "./lib/start.js"]);
    expect(JSON.parse(/^CMD (\[.*\])/m.exec(runtime)?.[1] ?? "[]")).toEqual(
      start.map((word) => word.replace(/^\.\//, "")),
    );
    const volume = /^VOLUME \["([^"]+)"\]/m.exec(runtime)?.[1] ?? "";
    expect(runtime).toMatch(new RegExp(`chown node:node ${volume}\\b`));
    // Probot writes .env in the working directory (/app, root's): it must be a link into the volume.
    expect(/^WORKDIR (\S+)/m.exec(runtime)?.[1]).toBe("/app");
    expect(runtime).toContain(`RUN ln -s ${volume}/.env /app/.env`);
    expect(runtime.indexOf("ln -s")).toBeLessThan(runtime.indexOf("USER node"));
  });

  it("copies only files that exist and that .dockerignore lets through", () => {
    const sources = instructions
      .filter((line) => line.startsWith("COPY ") && !line.includes("--from"))
      .flatMap((line) => line.split(/\s+/).slice(1, -1));
    expect(sources.length).toBeGreaterThan(0);
    for (const source of sources) {
      expect(existsSync(source), source).toBe(true);
      expect(dockerIgnores(source), source).toBe(false);
    }
    for (const kept of ["node_modules", ".env", ".git", "lib"]) expect(ignored).toContain(kept);
  });

  it("has a HEALTHCHECK, run with node, that passes when /healthz answers and fails when nothing does", async () => {
    const healthcheck = /HEALTHCHECK .*CMD (\[.*\])/.exec(instructions.join("\n"))?.[1];
    expect(healthcheck).toBeDefined();
    const [command, ...args] = JSON.parse(healthcheck ?? "[]") as string[];
    expect(command).toBe("node");
    const server = http.createServer((req, res) => res.writeHead(req.url === "/healthz" ? 200 : 404).end());
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    try {
      await expect(run(process.execPath, args, { env: { PORT: String(port) } })).resolves.toBeDefined();
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
    await expect(run(process.execPath, args, { env: { PORT: String(port) } })).rejects.toMatchObject({ code: 1 });
  });
});

describe(".env.example", () => {
  const listed = new Set([...exampleText.matchAll(/^#?\s*([A-Z][A-Z0-9_]+)=/gm)].map((match) => match[1]));

  it("lists Probot's variables and every one of Blueprint's", () => {
    for (const name of [
      "APP_ID",
      "PRIVATE_KEY",
      "PRIVATE_KEY_PATH",
      "WEBHOOK_SECRET",
      "GHE_HOST",
      "OPENAI_BASE_URL",
      "OPENAI_API_KEY",
      "BLUEPRINT_MODEL",
      "BLUEPRINT_WORKDIR",
    ]) {
      expect(listed, name).toContain(name);
    }
    for (const name of Object.keys(envSchema.shape)) expect(listed, name).toContain(name);
  });

  it("holds valid settings, and placeholders only", () => {
    const values = Object.fromEntries(
      [...exampleText.matchAll(/^([A-Z][A-Z0-9_]+)=(.*)$/gm)].map(([, name = "", value = ""]) => [
        name,
        value.replace(/^"|"$/g, ""),
      ]),
    );
    expect(() => loadEnv(values)).not.toThrow();
    // Nothing in it looks like a real token or key to Blueprint's own redactor.
    expect(createRedactor([])(exampleText)).toBe(exampleText);
  });
});
