import { parentPort, workerData } from "node:worker_threads";
import { z } from "zod";
import { appTokenMinter } from "../github/app-jwt.js";
import { mintJobToken, type CredentialsLog, type TokenFor } from "./job-token.js";
import type { FromMintThread } from "./mint-thread.js";

/** The token thread (see mint-thread.ts): mints job tokens with the App's key, one message per answer. */

const settings = z
  .object({ appId: z.number().int(), privateKey: z.string().min(1), baseUrl: z.string().min(1) })
  .parse(workerData);
const request = z.object({
  id: z.number().int(),
  job: z.object({
    installationId: z.number().int(),
    kind: z.string(),
    repository: z.object({ name: z.string().min(1) }),
  }),
});

const port = parentPort;
if (!port) throw new Error("mint-thread-main runs as a worker thread");
const post = (message: FromMintThread) => port.postMessage(message);
const line =
  (level: "info" | "warn" | "error") =>
  (fields: unknown, message?: string): void =>
    post({
      type: "log",
      level,
      fields: typeof fields === "object" && fields !== null ? plain(fields) : {},
      message: message ?? String(fields),
    });
const log = { info: line("info"), warn: line("warn"), error: line("error") } satisfies CredentialsLog;
// Every request here is one the intake's thread could not answer from its reused tokens: mint it.
const minter = appTokenMinter({ ...settings, log });

port.on("message", (raw: unknown) => {
  const parsed = request.safeParse(raw);
  if (!parsed.success) {
    const id = (raw as { id?: unknown } | null)?.id;
    if (typeof id === "number") post({ type: "failed", id, message: "the token request was malformed" });
    return;
  }
  const { id, job } = parsed.data;
  mintJobToken(minter, job as TokenFor).then(
    (token) => post({ type: "token", id, token }),
    (error: unknown) => {
      const status = (error as { status?: unknown }).status;
      post({
        type: "failed",
        id,
        message: error instanceof Error ? error.message : String(error),
        ...(typeof status === "number" ? { status } : {}),
      });
    },
  );
});

/** Log fields that cross to the intake's thread: errors as their message, the rest as is. */
function plain(fields: object): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(fields).map(([key, value]) => [key, value instanceof Error ? value.message : value]),
  );
}
