import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runHiddenCheck } from "../../eval/hidden-check.js";
import { loadTasks, type EvalTask } from "../../eval/task-suite.js";

const tasks = loadTasks();

function filesUnder(dir: string, prefix = ""): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? filesUnder(path.join(dir, entry.name), `${prefix}${entry.name}/`) : [`${prefix}${entry.name}`],
  );
}

function snapshot(task: EvalTask, withRealChange: boolean): string {
  const tree = mkdtempSync(path.join(os.tmpdir(), `blueprint-eval-task-${task.id}-`));
  cpSync(task.repoDir, tree, { recursive: true });
  if (withRealChange) cpSync(task.solutionDir, tree, { recursive: true });
  return tree;
}

describe("the eval task suite", () => {
  it("ships at least twelve tasks, from several packages", () => {
    expect(tasks.length).toBeGreaterThanOrEqual(12);
    expect(new Set(tasks.map((task) => task.meta.package)).size).toBeGreaterThanOrEqual(8);
  });

  describe.each(tasks.map((task) => [task.id, task] as const))("%s", (_id, task) => {
    it("is a small snapshot with its license, and its real change touches exactly the files task.json names", () => {
      const files = filesUnder(task.repoDir);
      expect(files.some((file) => /^licen[cs]e(\.md)?$/i.test(file))).toBe(true);
      expect(files.reduce((bytes, file) => bytes + statSync(path.join(task.repoDir, file)).size, 0)).toBeLessThan(60_000);
      expect(filesUnder(task.solutionDir).sort()).toEqual([...task.meta.changedFiles].sort());
      for (const file of task.meta.changedFiles) {
        const before = files.includes(file) ? readFileSync(path.join(task.repoDir, file), "utf8") : null;
        expect(readFileSync(path.join(task.solutionDir, file), "utf8")).not.toBe(before);
      }
      expect(task.issue.length).toBeGreaterThan(80);
    });

    it("has a hidden check that fails on the starting snapshot and passes with the real change", async () => {
      const snapshotTree = snapshot(task, false);
      const changedTree = snapshot(task, true);
      try {
        const before = await runHiddenCheck(task, snapshotTree);
        expect(before.passed, `the check passed on ${task.meta.package}@${task.meta.from}`).toBe(false);
        const after = await runHiddenCheck(task, changedTree);
        expect(after.passed, `the check failed with the real change:\n${after.output}`).toBe(true);
      } finally {
        for (const tree of [snapshotTree, changedTree]) rmSync(tree, { recursive: true, force: true });
      }
    });
  });
});
