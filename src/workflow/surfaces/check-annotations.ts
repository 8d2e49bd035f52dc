import path from "node:path";
import type { CheckAnnotation } from "../ports.js";

/** At most this many annotations per check run: enough to point at a failure, never a flood. */
export const MAX_ANNOTATIONS = 50;

/**
 * `src/a.ts:12:5 message` and `src/a.ts:12: message` (gcc, eslint's unix format, vitest, pytest, go),
 * `src/a.ts(12,5): message` (tsc, msbuild). The path has a file extension, so times (`12:05:33`) and
 * URLs' ports are not taken for one.
 */
const LOCATIONS = [
  /(?<file>[\w@+./\\-]*\w\.\w+):(?<line>\d+)(?::\d+)?(?::|\b)\s*(?<message>.*)$/,
  /(?<file>[\w@+./\\-]*\w\.\w+)\((?<line>\d+)(?:,\s*\d+)?\)\s*:?\s*(?<message>.*)$/,
];
const ANSI = /\u001b\[[0-9;]*[A-Za-z]/g;

/**
 * Where a failed command's output names a file and line of the repository: one annotation each
 * (first mention wins), for paths inside `root` that exist there. `command` titles them.
 */
export function annotationsFrom(
  output: string,
  command: string,
  root: string,
  exists: (relative: string) => boolean,
): CheckAnnotation[] {
  const found: CheckAnnotation[] = [];
  const seen = new Set<string>();
  for (const raw of output.split("\n")) {
    if (found.length >= MAX_ANNOTATIONS) break;
    const line = raw.replace(ANSI, "").trim();
    const match = LOCATIONS.map((pattern) => pattern.exec(line)).find((candidate) => candidate !== null);
    const groups = match?.groups;
    if (!groups?.file || !groups.line) continue;
    const file = insideRoot(groups.file, root);
    const lineNumber = Number(groups.line);
    if (!file || lineNumber < 1 || !exists(file)) continue;
    const key = `${file}:${lineNumber}`;
    if (seen.has(key)) continue;
    seen.add(key);
    // The words after the location, or the whole line when there are none (a stack frame, a bare location).
    const after = groups.message?.replace(/^[\s:-]+/, "") ?? "";
    found.push({
      path: file,
      line: lineNumber,
      level: "failure",
      title: `\`${command}\` failed`.slice(0, 255),
      message: (/\w/.test(after) ? after : line).slice(0, 1000),
    });
  }
  return found;
}

/** The path relative to the repository's root, or null when it names something outside it. */
function insideRoot(named: string, root: string): string | null {
  const slashed = named.replaceAll("\\", "/");
  const relative = path.posix.isAbsolute(slashed) ? path.posix.relative(root, slashed) : path.posix.normalize(slashed);
  if (relative === "" || relative.startsWith("..") || path.posix.isAbsolute(relative)) return null;
  return relative;
}
