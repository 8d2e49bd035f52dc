import { describe, expect, it } from "vitest";
import { countTokens } from "gpt-tokenizer";
import type { RepoFile } from "../../../src/tools/repo-map/collect-tags.js";
import type { RankedItem } from "../../../src/tools/repo-map/rank.js";
import { fitToBudget } from "../../../src/tools/repo-map/render.js";
import { normaliseTags, type Definition } from "../../../src/tools/repo-map/tags.js";

/** A small deterministic generator, so a failure names a seed that reproduces it. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

const AS_TEXT = { disallowedSpecial: new Set<string>() };
const HEAD = ["Repository map: a test tree.", "A second line of notes."];

/**
 * Files with definitions on random lines (some sharing a line, some on the first or last line), some without any, some
 * with notes.
 */
function randomTree(next: () => number): { files: RepoFile[]; items: RankedItem[] } {
  const files: RepoFile[] = [];
  const items: RankedItem[] = [];
  for (let index = 0; index < 40; index++) {
    const lineCount = 1 + Math.floor(next() * 60);
    const definitions: Definition[] = [];
    const count = next() < 0.2 ? 0 : 1 + Math.floor(next() * 8);
    for (let d = 0; d < count; d++) {
      const line = next() < 0.15 ? lineCount : 1 + Math.floor(next() * lineCount);
      definitions.push({
        name: `name${index}x${d}`,
        kind: "function",
        line,
        signature: `export function name${index}x${d}(value: number): string {`,
      });
    }
    const file: RepoFile = {
      path: `src/dir${index % 5}/file${index}.ts`,
      tags: normaliseTags("parser", definitions, new Map(), lineCount),
    };
    if (next() < 0.1) file.note = "300 KB; outlined from the first 64 KB";
    files.push(file);
  }
  files.forEach((file, index) => {
    const definitions = file.tags?.definitions ?? [];
    if (definitions.length === 0) items.push({ file: index, order: 0, score: next(), tier: 2 });
    for (const definition of definitions) items.push({ file: index, order: 0, definition, score: next(), tier: 2 });
  });
  items.sort((a, b) => b.score - a.score);
  items.forEach((item, order) => (item.order = order));
  return { files, items };
}

/** The map of exactly the first `count` items, rendered whole (a budget they all fit in). */
const mapOf = (files: RepoFile[], items: RankedItem[], count: number) =>
  fitToBudget(files, items.slice(0, count), HEAD, 16_384).text;
/** The per-line estimate the budget search is defined by: each line with its newline, counted alone. */
const estimateOf = (text: string) => text.split("\n").reduce((sum, line) => sum + countTokens(`${line}\n`, AS_TEXT), 0);

describe("repo_map's fit to a token budget", () => {
  it("shows the prefix a search over whole renderings would, and never more tokens than the budget", () => {
    for (let seed = 1; seed <= 6; seed++) {
      const { files, items } = randomTree(random(seed));
      // Budgets probe many of the same prefixes: each is rendered and estimated once.
      const rendered = new Map<number, { text: string; estimate: number }>();
      const prefix = (count: number) => {
        let found = rendered.get(count);
        if (!found) {
          const text = mapOf(files, items, count);
          found = { text, estimate: estimateOf(text) };
          rendered.set(count, found);
        }
        return found;
      };
      // Every 37 tokens: some budgets land where one token (a ⋮, a blank line) decides.
      for (let budget = 1000; budget <= 3000; budget += 37) {
        const fitted = fitToBudget(files, items, HEAD, budget);
        expect(fitted.tokens, `seed ${seed}, budget ${budget}`).toBe(countTokens(fitted.text, AS_TEXT));
        expect(fitted.tokens).toBeLessThanOrEqual(budget);
        // The reference: the same search (doubling from 64 items, then halving), rendering each
        // probed prefix in full and estimating it line by line.
        const limit = Math.min(items.length, budget);
        let low = 0;
        let high = Math.min(limit, 64);
        while (high < limit && prefix(high).estimate <= budget) {
          low = high;
          high = Math.min(limit, high * 2);
        }
        while (low < high) {
          const middle = Math.ceil((low + high) / 2);
          if (prefix(middle).estimate <= budget) low = middle;
          else high = middle - 1;
        }
        if (countTokens(prefix(low).text, AS_TEXT) <= budget) {
          expect(fitted.shown, `seed ${seed}, budget ${budget}`).toBe(low);
          expect(fitted.text).toBe(prefix(low).text);
        }
      }
    }
  });
});
