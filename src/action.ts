import { runAction } from "./action/runner.js";
import { coreIo } from "./action/io.js";

/** GitHub Action entry: the event file → the same jobs as the App's. Wiring only. */
await runAction({ env: process.env, io: coreIo(process.env) });
