import { randomBytes } from "node:crypto";
import { promises as fs, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { z } from "zod";
import { CliError } from "./checkout.js";
import { deriveStateKey, type ThreadSeal } from "../github/state-marker.js";
import { isProcessAlive } from "../shared/process-alive.js";

/**
 * What the local port calls the repository. The hidden state is bound to it; a fixed name keeps
 * threads valid when the checkout's directory is renamed (the key is the checkout's own anyway).
 */
export const LOCAL_REPOSITORY = { owner: "local", name: "checkout" } as const;

const storedCommentSchema = z.object({
  id: z.number().int(),
  body: z.string(),
  author: z.string(),
  /** Written by Blueprint (only such comments' state markers are read). */
  own: z.boolean(),
  createdAt: z.string(),
  updatedAt: z.string(),
});

const storedThreadSchema = z.object({
  version: z.literal(1),
  number: z.number().int().positive(),
  title: z.string(),
  /** The branch the thread was started on: plans are made on it and builds branch off it. */
  baseBranch: z.string(),
  requestedBy: z.string(),
  nextId: z.number().int().positive(),
  comments: z.array(storedCommentSchema),
});

export type StoredComment = z.output<typeof storedCommentSchema>;
export type StoredThread = z.output<typeof storedThreadSchema>;

/**
 * The CLI's threads: one JSON file per thread under .git/blueprint/threads/, holding the same
 * comments (hidden state markers included) that the App keeps on GitHub.
 */
export class ThreadStore {
  readonly dir: string;
  private saving: Promise<void> = Promise.resolve();

  constructor(gitDir: string) {
    this.dir = path.join(gitDir, "blueprint");
  }

  /**
   * The secret the CLI signs its threads' hidden state with: made on first use, kept beside the
   * threads (.git/blueprint/state-key, readable by the owner only), so a thread file edited by hand
   * or copied from another checkout is refused like a forged marker on GitHub.
   */
  stateSecret(): string {
    const file = path.join(this.dir, "state-key");
    try {
      return readFileSync(file, "utf8").trim();
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    }
    mkdirSync(this.dir, { recursive: true });
    try {
      writeFileSync(file, `${randomBytes(32).toString("hex")}\n`, { mode: 0o600, flag: "wx" });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    return readFileSync(file, "utf8").trim();
  }

  /** How this checkout's threads are signed and checked. */
  seal(number: number): ThreadSeal {
    return {
      key: deriveStateKey(this.stateSecret()),
      repository: `${LOCAL_REPOSITORY.owner}/${LOCAL_REPOSITORY.name}`,
      thread: number,
    };
  }

  fileOf(number: number): string {
    return path.join(this.dir, "threads", `${number}.json`);
  }

  /** The newest thread, or null when there is none yet. */
  async current(): Promise<StoredThread | null> {
    const numbers = await this.numbers();
    const newest = numbers.at(-1);
    return newest === undefined ? null : this.read(newest);
  }

  async create(title: string, baseBranch: string, requestedBy: string): Promise<StoredThread> {
    const number = ((await this.numbers()).at(-1) ?? 0) + 1;
    const thread: StoredThread = { version: 1, number, title, baseBranch, requestedBy, nextId: 1, comments: [] };
    await this.save(thread);
    return thread;
  }

  /** Writes atomically, one write at a time, so a crash never leaves half a file. */
  save(thread: StoredThread): Promise<void> {
    const file = this.fileOf(thread.number);
    const text = `${JSON.stringify(thread, null, 2)}\n`;
    const write = async () => {
      await fs.mkdir(path.dirname(file), { recursive: true });
      const temporary = `${file}.${process.pid}.tmp`;
      await fs.writeFile(temporary, text, "utf8");
      await fs.rename(temporary, file);
    };
    this.saving = this.saving.then(write, write);
    return this.saving;
  }

  /** One CLI command at a time per checkout; a lock left by a process that died is taken over. */
  async lock(): Promise<() => Promise<void>> {
    const file = path.join(this.dir, "lock");
    await fs.mkdir(this.dir, { recursive: true });
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        await fs.writeFile(file, String(process.pid), { flag: "wx" });
        return () => fs.rm(file, { force: true });
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
        const holder = Number(await fs.readFile(file, "utf8").catch(() => ""));
        if (holder && isProcessAlive(holder))
          throw new CliError(
            `another blueprint command (pid ${holder}) is running on this checkout; wait for it or stop it.`,
          );
        await fs.rm(file, { force: true });
      }
    }
    throw new CliError(`could not take the lock ${file}; remove it if no blueprint command is running.`);
  }

  private async numbers(): Promise<number[]> {
    const names = await fs.readdir(path.join(this.dir, "threads")).catch(() => []);
    return names
      .map((name) => /^(\d+)\.json$/.exec(name)?.[1])
      .filter((n): n is string => n !== undefined)
      .map(Number)
      .sort((a, b) => a - b);
  }

  private async read(number: number): Promise<StoredThread> {
    const file = this.fileOf(number);
    let data: unknown;
    try {
      data = JSON.parse(await fs.readFile(file, "utf8"));
    } catch (error) {
      throw new CliError(
        `could not read ${file}: ${error instanceof Error ? error.message : String(error)}. Move it away to start over.`,
      );
    }
    const parsed = storedThreadSchema.safeParse(data);
    if (!parsed.success)
      throw new CliError(
        `${file} is not a Blueprint thread (${parsed.error.issues[0]?.message ?? "invalid"}). Move it away to start over.`,
      );
    return parsed.data;
  }
}
