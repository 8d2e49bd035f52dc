/**
 * GitHub's CODEOWNERS pattern rules as a path test. Shared: CODEOWNERS (github/codeowners.ts) and a
 * plan's `files` entries (workflow/approval/outside-plan.ts) read paths the same way, and neither side owns the other.
 */

import picomatch from "picomatch";

/**
 * A pattern's test over repository paths, by picomatch. Like gitignore: a leading `/` or a `/`
 * inside anchors the pattern at the root, otherwise it matches at any depth; a match on a directory
 * covers everything in it. Unlike gitignore (and as GitHub documents), a lone `*` segment matches
 * one level only: `docs/*` owns `docs/a.md`, not `docs/guides/b.md`. With a leading `/`, it also reads
 * a plan's `files` entries (paths from the root, see workflow/approval/outside-plan.ts).
 */
export function pathMatcher(pattern: string): (path: string) => boolean {
  let segments = pattern.split("/");
  if (segments[0] === "") segments = segments.slice(1);
  else if ((segments.length === 1 || (segments.length === 2 && segments[1] === "")) && segments[0] !== "**")
    segments = ["**", ...segments];
  // A trailing slash means "the directory": everything inside it.
  if (segments.length > 1 && segments.at(-1) === "") segments[segments.length - 1] = "**";
  // Only `*` and `?` are wildcards in CODEOWNERS: picomatch's braces, extglobs and the like are taken literally.
  const glob = segments.map((segment) => segment.replace(/[^*?A-Za-z0-9_/-]/g, "\\$&")).join("/");
  const last = segments.at(-1);
  // A name (not a lone `*`) in the last place may be a directory: match what is inside it too. A trailing
  // `**` is what is inside (`/**/*`: picomatch's `docs/**` would also take a file named `docs`).
  const globs = last === "*" ? [glob] : last === "**" ? [`${glob}/*`] : [glob, `${glob}/**/*`];
  return picomatch(globs, { dot: true });
}
