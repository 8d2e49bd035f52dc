// The load bench's webhook sender, forked by bench/load/sender.ts into a process of its own: GitHub's
// senders run on GitHub's machines, so ours should cost the machine under test as little as it can.
// Each webhook is one pre-encoded HTTP/1.1 request written on one of `concurrency` keep-alive
// sockets; its latency runs from that write to the end of the answer. Gets the deliveries in its first
// message (warm-up first, unmeasured; then "warm", and the burst on "go").
import net from "node:net";
import { performance } from "node:perf_hooks";

const HEADER_END = Buffer.from("\r\n\r\n");

/** One keep-alive connection: sends a request, resolves with its status once the whole answer is read. */
class Connection {
  constructor(host, port) {
    this.host = host;
    this.port = port;
    this.socket = null;
    this.pending = null;
    this.buffer = Buffer.alloc(0);
  }

  send(request) {
    return new Promise((resolve) => {
      this.pending = resolve;
      this.buffer = Buffer.alloc(0);
      if (!this.socket || this.socket.destroyed) this.connect();
      this.socket.write(request);
    });
  }

  connect() {
    const socket = net.connect({ host: this.host, port: this.port, noDelay: true });
    socket.setTimeout(30_000, () => socket.destroy(new Error("timeout")));
    socket.on("data", (chunk) => this.read(chunk));
    // A refused or dropped connection answers the request in flight with 0; the next one reconnects.
    const fail = () => this.settle(0);
    socket.on("error", fail);
    socket.on("close", fail);
    this.socket = socket;
  }

  read(chunk) {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    const end = this.buffer.indexOf(HEADER_END);
    if (end < 0) return;
    const head = this.buffer.subarray(0, end).toString("latin1");
    const status = Number(head.slice(9, 12)) || 0;
    const length = /\r\ncontent-length:\s*(\d+)/i.exec(head);
    const body = this.buffer.length - end - HEADER_END.length;
    if (length) {
      if (body >= Number(length[1])) this.settle(status);
    } else if (/\r\ntransfer-encoding:\s*chunked/i.test(head)) {
      if (this.buffer.subarray(end).includes("\r\n0\r\n\r\n")) this.settle(status);
    } else {
      this.settle(status);
    }
  }

  settle(status) {
    const resolve = this.pending;
    this.pending = null;
    resolve?.(status);
  }

  close() {
    this.socket?.removeAllListeners("close");
    this.socket?.destroy();
  }
}

function encode(url, { headers, body }) {
  const lines = [`POST ${url.pathname}${url.search} HTTP/1.1`, `host: ${url.host}`, "connection: keep-alive"];
  for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
  const bytes = Buffer.from(body);
  lines.push(`content-length: ${bytes.length}`);
  return Buffer.concat([Buffer.from(`${lines.join("\r\n")}\r\n\r\n`, "latin1"), bytes]);
}

async function sendEach(connections, requests, deadline, record) {
  const results = new Array(requests.length);
  let next = 0;
  await Promise.all(
    connections.map(async (connection) => {
      while (next < requests.length && Date.now() < deadline) {
        const index = next++;
        const sentAt = Date.now();
        const started = performance.now();
        const status = await connection.send(requests[index]);
        if (record) results[index] = { sentAt, latencyMs: performance.now() - started, status };
      }
    }),
  );
  return results;
}

process.once("message", async ({ url: target, concurrency, deadline, warmUp, deliveries }) => {
  const url = new URL(target);
  const warmRequests = warmUp.map((delivery) => encode(url, delivery));
  const requests = deliveries.map((delivery) => encode(url, delivery));
  const connections = Array.from({ length: concurrency }, () => new Connection(url.hostname, Number(url.port)));
  await sendEach(connections, warmRequests, deadline, false);
  process.send("warm");
  process.once("message", async () => {
    const results = await sendEach(connections, requests, deadline, true);
    for (const connection of connections) connection.close();
    process.send(results, () => process.exit(0));
  });
});
