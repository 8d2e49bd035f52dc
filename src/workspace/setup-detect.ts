import { lstatSync, openSync, readSync, closeSync, constants } from "node:fs";
import path from "node:path";

/**
 * A repository's dependencies, as its lock files at the root tell them: which package manager, its
 * frozen install (run once before a build's first step when `.github/blueprint.yml` has no `setup:`),
 * and the test command the repository uses. Only regular files are read, never through a symlink:
 * the tree is untrusted and this runs outside the sandbox.
 */

export type PackageManager =
  "npm" | "pnpm" | "yarn" | "bun" | "uv" | "poetry" | "pipenv" | "pip" | "go" | "cargo" | "bundler";

export interface DetectedSetup {
  manager: PackageManager;
  /** The file it was detected from, relative to the root (e.g. `package-lock.json`). */
  lockFile: string;
  /** The frozen install, run at the root; null when nothing needs installing (e.g. Go modules vendored in the tree). */
  command: string | null;
  /** Where the dependencies are once installed, in words for the model. */
  where: string;
  /** The repository's test command for this ecosystem, or null when the tree does not tell. */
  test: { command: string; why: string } | null;
}

/** The most a file read here may hold (a package.json, a requirements file). */
const MAX_READ_BYTES = 1 << 20;

/** One install per ecosystem at the root, in this order: JavaScript, Python, Go, Rust, Ruby. */
export function detectSetups(root: string): DetectedSetup[] {
  const tree = new TreeFiles(root);
  return [detectJavaScript(tree), detectPython(tree), detectGo(tree), detectCargo(tree), detectBundler(tree)].filter(
    (found): found is DetectedSetup => found !== null,
  );
}

/** Reads a tree's files without following symlinks, each at most MAX_READ_BYTES. */
class TreeFiles {
  constructor(private readonly root: string) {}

  isFile(name: string): boolean {
    return this.lstat(name)?.isFile() ?? false;
  }

  isDir(name: string): boolean {
    return this.lstat(name)?.isDirectory() ?? false;
  }

  /** The file's text, or null when it is missing, not a regular file, or too big. */
  read(name: string): string | null {
    const stat = this.lstat(name);
    if (!stat?.isFile() || stat.size > MAX_READ_BYTES) return null;
    let fd: number | null = null;
    try {
      // O_NOFOLLOW: a symlink swapped in after the lstat is not followed either.
      fd = openSync(path.join(this.root, name), constants.O_RDONLY | constants.O_NOFOLLOW);
      const buffer = Buffer.alloc(stat.size);
      const bytes = readSync(fd, buffer, 0, stat.size, 0);
      return buffer.subarray(0, bytes).toString("utf8");
    } catch {
      return null;
    } finally {
      if (fd !== null) closeSync(fd);
    }
  }

  private lstat(name: string) {
    try {
      return lstatSync(path.join(this.root, name));
    } catch {
      return null;
    }
  }
}

/** npm's placeholder for a package without tests. */
const NPM_INIT_TEST = /no test specified/;

function detectJavaScript(tree: TreeFiles): DetectedSetup | null {
  const found = javaScriptManager(tree);
  if (!found) return null;
  const script = packageTestScript(tree);
  const run = found.manager === "npm" ? "npm test" : found.manager === "bun" ? "bun run test" : `${found.manager} test`;
  const test = script ? { command: run, why: `package.json scripts.test: \`${script}\`` } : null;
  return { ...found, where: "node_modules", test };
}

function javaScriptManager(tree: TreeFiles): Pick<DetectedSetup, "manager" | "lockFile" | "command"> | null {
  if (tree.isFile("pnpm-lock.yaml"))
    return { manager: "pnpm", lockFile: "pnpm-lock.yaml", command: "pnpm install --frozen-lockfile" };
  if (tree.isFile("yarn.lock")) {
    // Yarn 2+ (Berry) writes `__metadata` into its lock file and knows --immutable; Yarn 1 knows --frozen-lockfile.
    const berry = tree.isFile(".yarnrc.yml") || /^__metadata:/m.test(tree.read("yarn.lock") ?? "");
    return {
      manager: "yarn",
      lockFile: "yarn.lock",
      command: berry ? "yarn install --immutable" : "yarn install --frozen-lockfile",
    };
  }
  for (const lockFile of ["bun.lock", "bun.lockb"])
    if (tree.isFile(lockFile)) return { manager: "bun", lockFile, command: "bun install --frozen-lockfile" };
  for (const lockFile of ["package-lock.json", "npm-shrinkwrap.json"])
    if (tree.isFile(lockFile)) return { manager: "npm", lockFile, command: "npm ci --no-audit --no-fund" };
  return null;
}

/** package.json's `scripts.test`, unless it is npm's placeholder. */
function packageTestScript(tree: TreeFiles): string | null {
  try {
    const parsed: unknown = JSON.parse(tree.read("package.json") ?? "null");
    const script = (parsed as { scripts?: { test?: unknown } } | null)?.scripts?.test;
    return typeof script === "string" && script.trim() !== "" && !NPM_INIT_TEST.test(script) ? script.trim() : null;
  } catch {
    return null;
  }
}

/**
 * The requirements files pip installs, when there is no other Python lock file: the runtime ones, then those for
 * development and tests.
 */
const REQUIREMENTS = [
  "requirements.txt",
  "requirements-dev.txt",
  "requirements_dev.txt",
  "dev-requirements.txt",
  "requirements-test.txt",
  "requirements_test.txt",
  "test-requirements.txt",
  "requirements/dev.txt",
  "requirements/test.txt",
];
const VENV = "a virtual environment in `.venv` (run `.venv/bin/python`, or `.venv/bin/<tool>`)";

function detectPython(tree: TreeFiles): DetectedSetup | null {
  const found = pythonManager(tree);
  if (!found) return null;
  return {
    ...found,
    where: VENV,
    test: usesPytest(tree) ? { command: ".venv/bin/python -m pytest", why: "pytest is configured or required" } : null,
  };
}

function pythonManager(tree: TreeFiles): Pick<DetectedSetup, "manager" | "lockFile" | "command"> | null {
  if (tree.isFile("uv.lock")) return { manager: "uv", lockFile: "uv.lock", command: "uv sync --frozen" };
  // In the project: a `.venv` at the root is what Poetry and Pipenv then use, and what the steps see.
  if (tree.isFile("poetry.lock"))
    return {
      manager: "poetry",
      lockFile: "poetry.lock",
      command: "POETRY_VIRTUALENVS_IN_PROJECT=true poetry install --no-interaction --no-root",
    };
  if (tree.isFile("Pipfile.lock"))
    return { manager: "pipenv", lockFile: "Pipfile.lock", command: "PIPENV_VENV_IN_PROJECT=1 pipenv sync --dev" };
  const files = REQUIREMENTS.filter((name) => tree.isFile(name));
  const [first] = files;
  if (!first) return null;
  const install = `.venv/bin/python -m pip install --no-input --disable-pip-version-check ${files.map((name) => `-r ${name}`).join(" ")}`;
  return { manager: "pip", lockFile: first, command: `python3 -m venv .venv && ${install}` };
}

function usesPytest(tree: TreeFiles): boolean {
  if (tree.isFile("pytest.ini") || tree.isFile("conftest.py")) return true;
  const configured = [
    ["pyproject.toml", /^\[tool\.pytest/m],
    ["setup.cfg", /^\[tool:pytest\]/m],
    ["tox.ini", /^\[pytest\]/m],
  ] as const;
  if (configured.some(([name, section]) => section.test(tree.read(name) ?? ""))) return true;
  return [...REQUIREMENTS, "pyproject.toml", "Pipfile"].some((name) =>
    /^\s*["']?pytest\b/im.test(tree.read(name) ?? ""),
  );
}

function detectGo(tree: TreeFiles): DetectedSetup | null {
  if (!tree.isFile("go.mod")) return null;
  const test = { command: "go test ./...", why: "Go modules" };
  if (tree.isFile("vendor/modules.txt"))
    return { manager: "go", lockFile: "go.mod", command: null, where: "already vendored in `vendor/`", test };
  if (!tree.isFile("go.sum"))
    return {
      manager: "go",
      lockFile: "go.mod",
      command: null,
      where: "the module has no dependencies (no go.sum)",
      test,
    };
  // Vendored into the tree, where `go build` and `go test` find them offline; the module cache would not outlive the
  // setup.
  return { manager: "go", lockFile: "go.sum", command: "go mod vendor", where: "`vendor/` (not committed)", test };
}

function detectCargo(tree: TreeFiles): DetectedSetup | null {
  if (!tree.isFile("Cargo.lock")) return null;
  const test = { command: "cargo test --offline", why: "Cargo" };
  if (tree.isFile(".cargo/config.toml") || tree.isFile(".cargo/config")) {
    // The repository's own Cargo configuration is not rewritten: the crates are fetched, and last as long as the
    // setup's home directory.
    return {
      manager: "cargo",
      lockFile: "Cargo.lock",
      command: "cargo fetch --locked",
      where: "Cargo's cache, which does not outlast the setup (the repository has its own .cargo/config)",
      test,
    };
  }
  // Vendored into the tree, with the source replacement that points Cargo at them.
  return {
    manager: "cargo",
    lockFile: "Cargo.lock",
    command: "mkdir -p .cargo && cargo vendor --locked .cargo/vendor > .cargo/config.toml",
    where: "`.cargo/vendor`, named in `.cargo/config.toml` (neither committed)",
    test,
  };
}

function detectBundler(tree: TreeFiles): DetectedSetup | null {
  if (!tree.isFile("Gemfile.lock")) return null;
  const command =
    "bundle config set --local path vendor/bundle && bundle config set --local frozen true && bundle install";
  const test = tree.isDir("spec")
    ? { command: "bundle exec rspec", why: "a spec/ directory" }
    : tree.isFile("Rakefile")
      ? { command: "bundle exec rake test", why: "a Rakefile" }
      : null;
  return {
    manager: "bundler",
    lockFile: "Gemfile.lock",
    command,
    where: "`vendor/bundle` (run Ruby with `bundle exec`)",
    test,
  };
}
