import nock from "nock";
import { afterAll, beforeAll } from "vitest";

// The files that intercept HTTP with nock share one module graph per test process (vitest.config.ts): each starts
// and ends with nock as a fresh import has it, whatever the file before it left (interceptors, refused connections).
const reset = () => {
  nock.cleanAll();
  nock.enableNetConnect();
};
beforeAll(reset);
afterAll(reset);
