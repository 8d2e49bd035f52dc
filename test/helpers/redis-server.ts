import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import net from "node:net";

const REDIS_SERVER = ["/usr/bin/redis-server", "/usr/local/bin/redis-server"].find((candidate) => existsSync(candidate));

export interface RedisServer {
  url: string;
  port: number;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * Debian's `redis-server` on a free loopback port, nothing saved to disk; stops with the test
 * runner at the latest. Fails loudly when redis-server is not installed (`.ci/run` installs it).
 */
export async function startRedisServer(): Promise<RedisServer> {
  if (!REDIS_SERVER) throw new Error("redis-server is not installed: the Redis tests start a real one (apt-get install redis-server)");
  const port = await freePort();
  const child = spawn(REDIS_SERVER, ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--protected-mode", "yes", "--loglevel", "warning"], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const killOnExit = () => child.kill("SIGKILL");
  process.once("exit", killOnExit);

  const deadline = Date.now() + 10_000;
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
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`redis-server did not start on port ${port}:\n${output}`);
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
