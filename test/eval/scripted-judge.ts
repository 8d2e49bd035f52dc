import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import type { InstanceSource, Judge, JudgeReport, SweInstance } from "../../eval/judge.js";
import { gitIn } from "../helpers/git-repo.js";

const run = promisify(execFile);

/** What this stand-in reads beyond the contract's fields: Blueprint's extensions. */
type TinyInstance = SweInstance & { install: string; test_cmd: string; test_files: string[] };

/**
 * A small judge for SWE-format instances whose tests run with node:test, standing in for eval/swe/
 * (written in parallel) behind the same interface: real git, the real test command, TAP parsed to
 * `<file> > <title>` ids. It judges what the harness hands it, so the harness's path is tested whole.
 */
export function scriptedJudge(calls: string[] = []): Judge {
  const judge: Judge = {
    loadInstances(file) {
      return readFileSync(file, "utf8")
        .split("\n")
        .filter((line) => line.trim() !== "")
        .map((line) => {
          const raw = JSON.parse(line) as SweInstance & {
            FAIL_TO_PASS: string[] | string;
            PASS_TO_PASS: string[] | string;
          };
          const list = (value: string[] | string) =>
            typeof value === "string" ? (JSON.parse(value) as string[]) : value;
          return { ...raw, FAIL_TO_PASS: list(raw.FAIL_TO_PASS), PASS_TO_PASS: list(raw.PASS_TO_PASS) };
        });
    },
    loadRealSuite: () => [],
    async checkoutInstance(inst, source, into) {
      calls.push(`checkout ${inst.instance_id}`);
      if (!("reposDir" in source)) throw new Error("the scripted judge reads repositories from a folder");
      gitIn(path.dirname(into), [
        "clone",
        "-q",
        "--no-checkout",
        path.join(source.reposDir, inst.repo.replace("/", "__")),
        into,
      ]);
      gitIn(into, ["checkout", "-q", "--detach", inst.base_commit]);
      gitIn(into, ["remote", "remove", "origin"]);
    },
    async installDependencies(inst, dir) {
      calls.push(`install ${inst.instance_id}`);
      const done = await run("sh", ["-c", (inst as TinyInstance).install], { cwd: dir }).then(
        () => true,
        () => false,
      );
      return { ok: done, log: `$ ${(inst as TinyInstance).install}` };
    },
    async judgeInstance(inst, dir) {
      calls.push(`judge ${inst.instance_id}`);
      const patch = path.join(dir, "..", "test.patch");
      writeFileSync(patch, inst.test_patch);
      gitIn(dir, ["apply", patch]);
      const tiny = inst as TinyInstance;
      const output = await run("sh", ["-c", tiny.test_cmd], { cwd: dir }).then(
        (result) => result.stdout,
        (error: { stdout?: string }) => error.stdout ?? "",
      );
      const file = tiny.test_files[0] ?? "";
      const passed = new Set([...output.matchAll(/^ok \d+ - (.+)$/gm)].map((match) => `${file} > ${match[1]}`));
      const split = (ids: string[]) => ({
        success: ids.filter((id) => passed.has(id)),
        failure: ids.filter((id) => !passed.has(id)),
      });
      const report: JudgeReport = {
        resolved: false,
        FAIL_TO_PASS: split(inst.FAIL_TO_PASS),
        PASS_TO_PASS: split(inst.PASS_TO_PASS),
        log: output,
      };
      report.resolved = report.FAIL_TO_PASS.failure.length === 0 && report.PASS_TO_PASS.failure.length === 0;
      return report;
    },
    async validateInstance(inst: SweInstance, source: InstanceSource) {
      const started = performance.now();
      const problems: string[] = [];
      for (const gold of [false, true]) {
        const scratch = mkdtempSync(path.join(os.tmpdir(), "blueprint-eval-scripted-judge-"));
        try {
          const tree = path.join(scratch, "repo");
          await judge.checkoutInstance(inst, source, tree);
          if (gold) {
            writeFileSync(path.join(scratch, "gold.patch"), inst.patch ?? "");
            gitIn(tree, ["apply", path.join(scratch, "gold.patch")]);
          }
          const report = await judge.judgeInstance(inst, tree, { timeoutMs: 60_000 });
          if (!gold)
            problems.push(
              ...report.FAIL_TO_PASS.success.map((id) => `FAIL_TO_PASS test passes without the gold patch: ${id}`),
            );
          else
            problems.push(
              ...report.FAIL_TO_PASS.failure.map((id) => `FAIL_TO_PASS test does not pass with the gold patch: ${id}`),
            );
        } finally {
          rmSync(scratch, { recursive: true, force: true });
        }
      }
      return { ok: problems.length === 0, problems, durationMs: performance.now() - started };
    },
    filesOfPatch: (patch) => [...patch.matchAll(/^diff --git a\/\S+ b\/(\S+)$/gm)].map((match) => match[1] ?? ""),
  };
  return judge;
}
