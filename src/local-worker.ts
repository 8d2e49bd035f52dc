import { startLocalWorker } from "./app/local-worker.js";

/**
 * The local worker (no Redis): `npm start` forks it, so jobs never share the intake's event loop.
 * It triages (permission, 👀, quick answers, thread lanes) and forks a job runner, at a lower CPU
 * priority, for the lane work. Its environment holds neither the App's private key nor the webhook
 * secret. Wiring only.
 */
startLocalWorker();
