// Ablation 2026-11-28 (npm run bench ablate, load 5–16): fresh-burst webhook p99 84–221 ms vs 359–588 ms without.
/**
 * Why this exists: since libuv 1.45 (Node 20.3 and later) a server accepts one connection per turn of
 * the event loop (libuv pull request #3696), and each turn also runs every request that arrived on
 * the connections it has. When a burst comes on a hundred fresh connections at once, the first few
 * accepted keep the turns long and the rest wait to be accepted: in `npm run bench -- load`, a process
 * that had just started answered the burst's first webhooks after 0.7–1.1 s while its p50 was 25 ms.
 * Letting the turns that accept stay short (no webhook work in them) took the webhook p99 to 0.1–0.2
 * s, and with Redis from 2.7 s to 0.3–0.5 s; on connections already open nothing changes.
 */

/** Turns in a row that may skip the waiting webhooks while new connections keep coming in. */
const MAX_SKIPPED_TURNS = 8;
/**
 * A webhook that has waited this long is served one per turn whatever comes in (a flood of new connections still
 * moves).
 */
const MAX_WAIT_MS = 100;

interface Waiting {
  go: () => void;
  since: number;
}

/**
 * Webhook work goes in turns of the event loop. A turn serves every waiting webhook, unless a request
 * came on a connection not seen before since the last turn: then the connections still being
 * accepted come first, and the turn serves none (at most eight turns in a row) or one (after that, or
 * once the oldest has waited 100 ms).
 */
export class NewConnectionsFirst {
  private readonly waiting: Waiting[] = [];
  private readonly seen = new WeakSet<object>();
  private newConnections = 0;
  private skipped = 0;
  private scheduled = false;

  constructor(private readonly now: () => number = () => performance.now()) {}

  /** Resolves in the turn that serves this request (`connection`: the socket it came on). */
  turn(connection: object): Promise<void> {
    if (!this.seen.has(connection)) {
      this.seen.add(connection);
      this.newConnections++;
    }
    return new Promise((go) => {
      this.waiting.push({ go, since: this.now() });
      this.schedule();
    });
  }

  get queued(): number {
    return this.waiting.length;
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.serve());
  }

  private serve(): void {
    this.scheduled = false;
    const accepting = this.newConnections > 0;
    this.newConnections = 0;
    if (!accepting) {
      this.skipped = 0;
      for (const { go } of this.waiting.splice(0)) go();
    } else if (this.skipped >= MAX_SKIPPED_TURNS || this.now() - (this.waiting[0]?.since ?? Infinity) >= MAX_WAIT_MS) {
      this.skipped = 0;
      this.waiting.shift()?.go();
    } else {
      this.skipped++;
    }
    if (this.waiting.length > 0) this.schedule();
  }
}
