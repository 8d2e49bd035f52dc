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
 * The longest files first, whatever their project, so that no long file starts near the end and the two cores are
 * not left to one file while the rest wait (vitest's default runs its projects one after the other, each from
 * the largest file, and knows durations only from an earlier run on the same machine). With an earlier run's
 * durations for every file, those order them; on a fresh clone, the file's size weighted by what it starts.
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
    return [...files].sort((a, b) => (cost.get(b) ?? 0) - (cost.get(a) ?? 0));
  }
}
