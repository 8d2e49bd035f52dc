import { execFileSync } from "node:child_process";
import { promises as fs } from "node:fs";
import path from "node:path";

export function git(dir: string, ...args: string[]): string {
  return execFileSync("git", ["-c", "user.name=Test", "-c", "user.email=test@example.com", ...args], {
    cwd: dir,
    encoding: "utf8",
  });
}

export async function write(dir: string, file: string, content: string | Buffer): Promise<void> {
  await fs.mkdir(path.dirname(path.join(dir, file)), { recursive: true });
  await fs.writeFile(path.join(dir, file), content);
}

/** A committed git repository holding `files`. */
export async function commitRepo(dir: string, files: Record<string, string>): Promise<string> {
  await fs.mkdir(dir, { recursive: true });
  git(dir, "init", "-q");
  for (const [file, content] of Object.entries(files)) await write(dir, file, content);
  git(dir, "add", "-A");
  git(dir, "commit", "-q", "-m", "init");
  return dir;
}

/** `src/shared.ts` and `parts` files `src/part<i>.ts` that each use it: a tree with one hub and many leaves. */
export function sharedAndParts(parts: number): Record<string, string> {
  const files: Record<string, string> = {
    "src/shared.ts": "export function shared(n: number): number {\n  return n;\n}\n",
  };
  for (let i = 0; i < parts; i++)
    files[`src/part${i}.ts`] =
      `import { shared } from "./shared";\nexport function part${i}() {\n  return shared(${i});\n}\n`;
  return files;
}

/** The map's body: file lines (at the margin) and definition lines under them. */
const bodyOf = (map: string): string[] => (map.split("\n\n")[1] ?? "").split("\n");

/** Shown files in map order (their header line without notes). */
export function filesInOrder(map: string): string[] {
  return bodyOf(map)
    .filter((line) => line !== "" && !line.startsWith(" "))
    .map((line) => line.replace(/ \(.*\)$/, ""));
}

/** A file's header line as shown (with its notes). */
export function headerOf(map: string, file: string): string | undefined {
  return bodyOf(map).find((line) => line === file || line.startsWith(`${file} (`));
}

/** The definitions shown under a file, as [line number, source line]. */
export function definitionsOf(map: string, file: string): Array<[number, string]> {
  const lines = bodyOf(map);
  const start = lines.findIndex((line) => line === file || line.startsWith(`${file} (`));
  if (start < 0) throw new Error(`${file} is not in the map:\n${map}`);
  const shown: Array<[number, string]> = [];
  for (const line of lines.slice(start + 1)) {
    if (!line.startsWith(" ")) break;
    const match = /^ *(\d+)│(.*)$/.exec(line);
    if (match) shown.push([Number(match[1]), match[2] ?? ""]);
  }
  return shown;
}
