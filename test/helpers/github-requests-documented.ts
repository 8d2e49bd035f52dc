import { afterAll, afterEach } from "vitest";
import { failOnUndocumented } from "./undocumented-requests.js";

// A setup file (vitest.config.ts): a test fails when a GitHub double was sent a request GitHub does not document,
// during it or after the test before it (an app still at work); the file's last ones fail its afterAll.
afterEach(failOnUndocumented);
afterAll(failOnUndocumented);
