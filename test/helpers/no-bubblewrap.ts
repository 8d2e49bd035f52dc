import { chmodSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { tempDir } from "./git-repo.js";

/**
 * A directory to use as the whole PATH of a machine without a working bubblewrap: none at all
 * (`missing`), or a `bwrap` that cannot start, as where user namespaces are off (`broken`). `tools`
 * (from /usr/bin) are linked in for what must still run there (git, sh).
 */
export function pathWithout(kind: "missing" | "broken", tools: string[] = []): string {
  const dir = tempDir("no-bubblewrap-path-");
  for (const tool of tools) symlinkSync(path.join("/usr/bin", tool), path.join(dir, tool));
  if (kind === "broken") {
    writeFileSync(
      path.join(dir, "bwrap"),
      "#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n",
    );
    chmodSync(path.join(dir, "bwrap"), 0o755);
  }
  return dir;
}
