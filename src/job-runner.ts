import { startJobRunner } from "./app/job-runner.js";

/**
 * A worker's job runner (the local worker's, or a Redis queue worker's): lane work only, at a lower CPU priority, in
 * its own process.
 * Like its worker, its environment holds neither the App's private key nor the webhook secret. Wiring only.
 */
startJobRunner();
