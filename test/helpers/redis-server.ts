import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import net from "node:net";
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll } from "vitest";
import { freePort } from "./free-port.js";
import { PATIENCE_MS } from "./patience.js";

const REDIS_SERVER = ["/usr/bin/redis-server", "/usr/local/bin/redis-server"].find((candidate) =>
  existsSync(candidate),
);

export interface RedisServer {
  url: string;
  port: number;
  stop(): Promise<void>;
}

/**
 * Debian's `redis-server` on a free loopback port, nothing saved to disk; stops with the test
 * runner at the latest. Fails loudly when redis-server is not installed (`.ci/run` installs it).
 */
export async function startRedisServer(): Promise<RedisServer> {
  if (!REDIS_SERVER)
    throw new Error("redis-server is not installed: the Redis tests start a real one (apt-get install redis-server)");
  const port = await freePort();
  const child = spawn(
    REDIS_SERVER,
    [
      "--port",
      String(port),
      "--bind",
      "127.0.0.1",
      "--save",
      "",
      "--appendonly",
      "no",
      "--protected-mode",
      "yes",
      "--loglevel",
      "warning",
    ],
    {
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const killOnExit = () => child.kill("SIGKILL");
  process.once("exit", killOnExit);

  const deadline = Date.now() + PATIENCE_MS;
  for (;;) {
    const ready = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, "127.0.0.1", () => socket.write("PING\r\n"));
      socket.once("data", (data) => {
        socket.destroy();
        resolve(data.toString().startsWith("+PONG"));
      });
      socket.once("error", () => resolve(false));
    });
    if (ready) break;
    if (child.exitCode !== null || Date.now() > deadline)
      throw new Error(`redis-server did not start on port ${port}:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    async stop() {
      process.removeListener("exit", killOnExit);
      if (child.exitCode === null) child.kill("SIGTERM");
      await exited;
    },
  };
}

/**
 * A test file's Redis: a server started before its tests and stopped after, one connection, BullMQ
 * queues by name, and what each test asks to close (`closers`) closed after it, with the data flushed.
 */
export function useRedis(options: { queues: readonly string[] }) {
  let server: RedisServer | undefined;
  let connection: Redis | undefined;
  const queues = new Map<string, Queue>();
  const closers: Array<() => Promise<unknown>> = [];
  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error("useRedis: asked before its beforeAll ran");
    return value;
  };
  beforeAll(async () => {
    server = await startRedisServer();
    connection = new Redis(server.url, { maxRetriesPerRequest: null });
    for (const name of options.queues) queues.set(name, new Queue(name, { connection }));
  });
  afterAll(async () => {
    await Promise.all([...queues.values()].map((queue) => queue.close()));
    await connection?.quit();
    await server?.stop();
  });
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
    await connection?.flushall();
  });
  return {
    closers,
    get url() {
      return started(server).url;
    },
    get connection() {
      return started(connection);
    },
    queue: (name: string) => started(queues.get(name)),
  };
}
