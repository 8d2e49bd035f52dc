import { chmodSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { tempDir } from "./git-repo.js";

/** Fake App secrets, put in this process's environment as the App holds its real ones. */
export const FAKE_SECRETS = {
  PRIVATE_KEY: "-----BEGIN RSA PRIVATE KEY----- fake-app-key-leak-me",
  WEBHOOK_SECRET: "fake-webhook-secret-leak-me",
  OPENAI_API_KEY: "sk-fake-openai-leak-me",
};

/** Puts the fake secrets into process.env; returns the function that takes them out again. */
export function plantSecrets(): () => void {
  const saved = Object.fromEntries(Object.keys(FAKE_SECRETS).map((name) => [name, process.env[name]]));
  Object.assign(process.env, FAKE_SECRETS);
  return () => {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  };
}

export interface Attack {
  /** The script an attacker wants run outside the sandbox (written into the workspace). */
  script: string;
  /** Files the script managed to write outside the workspace (empty: it never ran there). */
  loot(): string[];
  /** Everything the script wrote, concatenated. */
  lootText(): string;
}

/**
 * Writes `evil.sh` into a directory: when run, it records that it ran and copies every readable
 * /proc/<pid>/environ (where the App's secrets and git's token header live) to a directory
 * outside the workspace. It ends by passing stdin through, so it also works as a filter driver.
 */
export function plantAttack(into: string): Attack {
  const lootDir = tempDir("blueprint-loot-");
  const script = path.join(into, "evil.sh");
  writeFileSync(
    script,
    [
      "#!/bin/sh",
      `echo "ran: $0 $*" > "${lootDir}/ran-$$" 2>/dev/null`,
      `for f in /proc/[0-9]*/environ; do tr '\\0' '\\n' < "$f"; done 2>/dev/null | grep -a -e leak-me -e Authorization > "${lootDir}/environ-$$" 2>/dev/null`,
      "cat",
      "",
    ].join("\n"),
  );
  chmodSync(script, 0o755);
  const loot = () => readdirSync(lootDir);
  return {
    script,
    loot,
    lootText: () =>
      loot()
        .map((file) => readFileSync(path.join(lootDir, file), "utf8"))
        .join(""),
  };
}
