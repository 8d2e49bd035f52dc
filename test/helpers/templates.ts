import { cpSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";

/**
 * Directories made once per process for each key, kept on globalThis (test files that share a process share them) and
 * removed as the process exits (the load bench runs outside the suite's TMPDIR).
 */
const TEMPLATES = Symbol.for("blueprint.test.directory-templates");

function templates(): Map<string, string> {
  const global = globalThis as { [TEMPLATES]?: Map<string, string> };
  let kept = global[TEMPLATES];
  if (!kept) {
    const made = new Map<string, string>();
    process.once("exit", () => {
      for (const template of made.values()) rmSync(template, { recursive: true, force: true });
    });
    kept = global[TEMPLATES] = made;
  }
  return kept;
}

/**
 * Copies into `into` the directory `make` filled for `key`, made the first time a key is asked for: a test repository
 * costs several git processes to make and one file copy to copy, and every copy is independent. Returns the template's
 * path, for a caller that must rewrite paths the copy records.
 */
export function copyTemplate(key: string, make: (dir: string) => void, into: string): string {
  let template = templates().get(key);
  if (!template) {
    template = mkdtempSync(path.join(os.tmpdir(), "blueprint-template-"));
    make(template);
    templates().set(key, template);
  }
  cpSync(template, into, { recursive: true });
  return template;
}
