import { mkdtempSync, rmSync } from "node:fs";
import type { AddressInfo } from "node:net";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeAll } from "vitest";
import { assertCliBuilt } from "../cli/support.js";
import { startModelServer, type ModelServer, type Script } from "../helpers/model-server.js";

/** One eval test's set-up: the built CLI, a scripted model server and report folders, all removed after each test. */
export function useEvalRun(): { startModel(script: Script): Promise<ModelServer>; outDir(): string } {
  let model: ModelServer | null = null;
  const outDirs: string[] = [];
  beforeAll(() => assertCliBuilt());
  afterEach(async () => {
    await model?.close();
    model = null;
    for (const dir of outDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  return {
    async startModel(script) {
      model = await startModelServer(script);
      return model;
    },
    outDir() {
      const dir = mkdtempSync(path.join(os.tmpdir(), "blueprint-eval-out-"));
      outDirs.push(dir);
      return dir;
    },
  };
}

/** A port on 127.0.0.1 that nothing listens on (bound, then closed). */
export async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
