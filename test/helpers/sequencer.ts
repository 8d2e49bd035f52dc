import { statSync } from "node:fs";
import path from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * How much longer than its size suggests a file takes: the e2e files start apps, workers and Redis; cli.test starts the
 * CLI dozens of times; the app and eval files run whole jobs.
 */
const SLOWER: Array<[RegExp, number]> = [
  [/\/test\/e2e\/[^/]+\.e2e\.test\.ts$/, 10],
  [/\/test\/cli\/cli\.test\.ts$/, 4],
  [/\/test\/(app|eval)\//, 2],
];

/**
 * Each project's longest files first, so that no long file starts near the end of its project while the two cores wait
 * for it. vitest's default knows durations only from an earlier run on the same machine: on a fresh clone it kept the
 * files in the order it found them, and cli.test, the longest of its project, started last (at 202 s of 281). With an
 * earlier run's durations for every file, those order them; otherwise the file's size weighted by what it starts.
 * Projects still run one after the other, as vitest's default does: a worker that runs files without isolation is
 * reused only for files of its own project, and mixing them (tried) doubled the suite's import time.
 */
export default class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const key = (spec: TestSpecification) =>
      `${spec.project.name}:${path.relative(this.ctx.config.root, spec.moduleId)}`;
    const durations = files.map((spec) => this.ctx.cache.getFileTestResults(key(spec))?.duration);
    const known = durations.every((duration) => duration !== undefined);
    const cost = new Map(
      files.map((spec, index) => [
        spec,
        known
          ? (durations[index] ?? 0)
          : statSync(spec.moduleId).size * (SLOWER.find(([pattern]) => pattern.test(spec.moduleId))?.[1] ?? 1),
      ]),
    );
    return [...files].sort(
      (a, b) => a.project.name.localeCompare(b.project.name) || (cost.get(b) ?? 0) - (cost.get(a) ?? 0),
    );
  }
}
