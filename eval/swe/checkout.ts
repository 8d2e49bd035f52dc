import { existsSync, mkdirSync, readdirSync, statSync } from "node:fs";
import path from "node:path";
import { git } from "./git.js";
import type { SweInstance } from "./instance.js";
import { applyPatch, filesOfPatch } from "./patch.js";

/** Where an instance's history comes from: a git bundle, or a folder of checkouts / bare repositories. */
export type RepoSource = { bundle: string } | { reposDir: string };

const IDENTITY = [
  ["user.name", "Blueprint eval"],
  ["user.email", "eval@blueprint.invalid"],
  ["commit.gpgsign", "false"],
] as const;

/**
 * A fresh working tree at `base_commit` in `into` (created, must be empty): only the history up to
 * that commit is fetched, so the fix and anything later are not in the repository for the agent to
 * find. No remote; its own git identity; branch `main`. With `lockfile_patch`, package-lock.json
 * is added and committed on top, so the agent's diff starts after it.
 */
export async function checkoutInstance(inst: SweInstance, source: RepoSource, into: string): Promise<void> {
  const from = "bundle" in source ? path.resolve(source.bundle) : findRepository(source.reposDir, inst.repo);
  if (!existsSync(from)) throw new Error(`${inst.instance_id}: no bundle at ${from}`);
  mkdirSync(into, { recursive: true });
  if (readdirSync(into).length > 0) throw new Error(`${inst.instance_id}: ${into} is not empty`);
  await git(["init", "-q", "-b", "main"], { cwd: into });
  for (const [key, value] of IDENTITY) await git(["config", key, value], { cwd: into });
  const fetched = await git(["fetch", "-q", "--no-tags", from, inst.base_commit], { cwd: into, allowFailure: true });
  if (fetched.code !== 0)
    throw new Error(
      `${inst.instance_id}: ${inst.repo} at ${from} has no commit ${inst.base_commit}: ${fetched.stderr.trim()}`,
    );
  await git(["reset", "-q", "--hard", inst.base_commit], { cwd: into });
  // A bundle's pack arrives whole, later commits included: drop every object base_commit does not reach.
  if ("bundle" in source)
    await git(["-c", "gc.reflogExpire=now", "-c", "gc.reflogExpireUnreachable=now", "gc", "-q", "--prune=now"], {
      cwd: into,
    });
  if (inst.lockfile_patch) {
    await applyPatch(into, inst.lockfile_patch, "lockfile_patch");
    // -f: several repositories list package-lock.json in .gitignore.
    await git(["add", "-f", "--", ...filesOfPatch(inst.lockfile_patch)], { cwd: into });
    await git(["commit", "-q", "--no-verify", "-m", "eval: add the package-lock.json the dependencies install from"], {
      cwd: into,
    });
  }
}

/**
 * The repository for `owner/name` under `dir`: `dir/owner__name`, `dir/name` or `dir/owner/name`,
 * each a checkout or a bare repository (`.git` suffix accepted).
 */
export function findRepository(dir: string, repo: string): string {
  const [owner = "", name = ""] = repo.split("/");
  const candidates = [`${owner}__${name}`, name, path.join(owner, name)]
    .flatMap((relative) => [relative, `${relative}.git`])
    .map((relative) => path.resolve(dir, relative));
  const found = candidates.find((candidate) => existsSync(candidate) && statSync(candidate).isDirectory());
  if (!found)
    throw new Error(
      `no repository for ${repo} under ${dir} (looked for ${candidates.map((candidate) => path.relative(dir, candidate)).join(", ")})`,
    );
  return found;
}
