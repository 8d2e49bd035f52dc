import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { detectSetups } from "../../src/workspace/setup-detect.js";

/** A tree holding `files` (path → content). */
function tree(files: Record<string, string>): string {
  const root = mkdtempSync(path.join(os.tmpdir(), "setup-detect-"));
  for (const [name, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, name)), { recursive: true });
    writeFileSync(path.join(root, name), content);
  }
  return root;
}

const pkg = (test?: string) => JSON.stringify({ name: "x", version: "1.0.0", ...(test ? { scripts: { test } } : {}) });
const one = (files: Record<string, string>) => {
  const found = detectSetups(tree(files));
  expect(found).toHaveLength(1);
  return found[0]!;
};

describe("which package manager a repository's lock files name, its frozen install and its test command", () => {
  it("npm: package-lock.json (or npm-shrinkwrap.json) → npm ci; package.json scripts.test → npm test", () => {
    expect(one({ "package.json": pkg("vitest run"), "package-lock.json": "{}" })).toEqual({
      manager: "npm",
      lockFile: "package-lock.json",
      command: "npm ci --no-audit --no-fund",
      where: "node_modules",
      test: { command: "npm test", why: "package.json scripts.test: `vitest run`" },
    });
    expect(one({ "package.json": pkg(), "npm-shrinkwrap.json": "{}" })).toMatchObject({
      manager: "npm",
      lockFile: "npm-shrinkwrap.json",
      test: null,
    });
    // npm init's placeholder is no test command.
    expect(
      one({ "package.json": pkg('echo "Error: no test specified" && exit 1'), "package-lock.json": "{}" }).test,
    ).toBeNull();
  });

  it("pnpm: pnpm-lock.yaml → pnpm install --frozen-lockfile, pnpm test", () => {
    expect(one({ "package.json": pkg("jest"), "pnpm-lock.yaml": "lockfileVersion: '9.0'\n" })).toMatchObject({
      manager: "pnpm",
      command: "pnpm install --frozen-lockfile",
      test: { command: "pnpm test" },
    });
  });

  it("yarn: yarn.lock → --frozen-lockfile for Yarn 1, --immutable for Yarn 2+ (a __metadata lock or .yarnrc.yml)", () => {
    expect(one({ "package.json": pkg("mocha"), "yarn.lock": "# yarn lockfile v1\n" })).toMatchObject({
      manager: "yarn",
      command: "yarn install --frozen-lockfile",
      test: { command: "yarn test" },
    });
    expect(one({ "yarn.lock": "__metadata:\n  version: 8\n" }).command).toBe("yarn install --immutable");
    expect(one({ "yarn.lock": "# yarn lockfile v1\n", ".yarnrc.yml": "nodeLinker: node-modules\n" }).command).toBe(
      "yarn install --immutable",
    );
  });

  it("bun: bun.lock or bun.lockb → bun install --frozen-lockfile", () => {
    expect(one({ "package.json": pkg("bun test"), "bun.lockb": "" })).toMatchObject({
      manager: "bun",
      command: "bun install --frozen-lockfile",
      test: { command: "bun run test" },
    });
    expect(one({ "bun.lock": "{}" }).lockFile).toBe("bun.lock");
  });

  it("pip: requirements files → a .venv at the root with all of them installed; pytest when it is required or configured", () => {
    expect(one({ "requirements.txt": "requests==2.0\n", "requirements-dev.txt": "pytest==8.0\n" })).toEqual({
      manager: "pip",
      lockFile: "requirements.txt",
      command:
        "python3 -m venv .venv && .venv/bin/python -m pip install --no-input --disable-pip-version-check -r requirements.txt -r requirements-dev.txt",
      where: expect.stringContaining("`.venv`"),
      test: { command: ".venv/bin/python -m pytest", why: "pytest is configured or required" },
    });
    expect(one({ "requirements.txt": "requests==2.0\n" }).test).toBeNull();
    expect(
      one({ "requirements.txt": "requests==2.0\n", "pyproject.toml": "[tool.pytest.ini_options]\n" }).test?.command,
    ).toBe(".venv/bin/python -m pytest");
  });

  it("uv: uv.lock → uv sync --frozen; poetry: poetry.lock → poetry install into .venv; pipenv: Pipfile.lock → pipenv sync", () => {
    expect(one({ "uv.lock": "", "pyproject.toml": "", "conftest.py": "" })).toMatchObject({
      manager: "uv",
      command: "uv sync --frozen",
      test: { command: ".venv/bin/python -m pytest" },
    });
    expect(one({ "poetry.lock": "", "pyproject.toml": "", "requirements.txt": "x\n" })).toMatchObject({
      manager: "poetry",
      command: "POETRY_VIRTUALENVS_IN_PROJECT=true poetry install --no-interaction --no-root",
    });
    expect(one({ "Pipfile.lock": "{}" })).toMatchObject({
      manager: "pipenv",
      command: "PIPENV_VENV_IN_PROJECT=1 pipenv sync --dev",
    });
  });

  it("go: go.sum → go mod vendor (offline steps find vendor/); vendored or without dependencies, nothing to install; go test ./...", () => {
    expect(one({ "go.mod": "module x\n", "go.sum": "" })).toMatchObject({
      manager: "go",
      lockFile: "go.sum",
      command: "go mod vendor",
      test: { command: "go test ./..." },
    });
    expect(one({ "go.mod": "module x\n", "go.sum": "", "vendor/modules.txt": "" })).toMatchObject({
      command: null,
      where: "already vendored in `vendor/`",
    });
    expect(one({ "go.mod": "module x\n" }).command).toBeNull();
  });

  it("cargo: Cargo.lock → cargo vendor --locked with its source replacement; the repository's own .cargo/config kept, crates only fetched", () => {
    expect(one({ "Cargo.toml": "", "Cargo.lock": "" })).toMatchObject({
      manager: "cargo",
      command: "mkdir -p .cargo && cargo vendor --locked .cargo/vendor > .cargo/config.toml",
      test: { command: "cargo test --offline" },
    });
    expect(one({ "Cargo.lock": "", ".cargo/config.toml": "" }).command).toBe("cargo fetch --locked");
  });

  it("bundler: Gemfile.lock → a frozen bundle install into vendor/bundle; rspec with a spec/ directory, rake test with a Rakefile", () => {
    expect(one({ "Gemfile.lock": "", "spec/a_spec.rb": "" })).toMatchObject({
      manager: "bundler",
      command:
        "bundle config set --local path vendor/bundle && bundle config set --local frozen true && bundle install",
      test: { command: "bundle exec rspec" },
    });
    expect(one({ "Gemfile.lock": "", Rakefile: "" }).test?.command).toBe("bundle exec rake test");
  });

  it("one install per ecosystem, in a fixed order; the preferred lock file of each wins", () => {
    const found = detectSetups(
      tree({
        "package.json": pkg("vitest"),
        "package-lock.json": "{}",
        "pnpm-lock.yaml": "",
        "requirements.txt": "",
        "uv.lock": "",
        "go.mod": "",
        "go.sum": "",
        "Cargo.lock": "",
        "Gemfile.lock": "",
      }),
    );
    expect(found.map((setup) => setup.manager)).toEqual(["pnpm", "uv", "go", "cargo", "bundler"]);
  });

  it("nothing without a lock file; a lock file that is a symlink or a directory does not count, and package.json is never read through a symlink", () => {
    expect(detectSetups(tree({ "package.json": pkg("jest"), "README.md": "" }))).toEqual([]);
    const linked = tree({ "secret.json": pkg("cat /etc/passwd") });
    symlinkSync(path.join(linked, "secret.json"), path.join(linked, "package.json"));
    symlinkSync(path.join(linked, "secret.json"), path.join(linked, "package-lock.json"));
    mkdirSync(path.join(linked, "Cargo.lock"));
    expect(detectSetups(linked)).toEqual([]);
    writeFileSync(path.join(linked, "yarn.lock"), "");
    expect(detectSetups(linked)).toMatchObject([{ manager: "yarn", test: null }]);
  });
});
