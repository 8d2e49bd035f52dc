/** A turn taken with `Turns.take`: `end()` lets the next one in (again: no effect). */
export interface Turn {
  end(): void;
}

/** A turn that is never ended (GitHub hanging on a request) lets the next one in after this long. */
const LONGEST_TURN_MS = 15_000;

/**
 * Turns per key, in the order they were asked for: `take(key)` resolves when every earlier turn of
 * that key has ended. Keys with nobody waiting are forgotten.
 */
export class Turns {
  private readonly tails = new Map<string | number, Promise<void>>();

  constructor(private readonly longestMs = LONGEST_TURN_MS) {}

  async take(key: string | number): Promise<Turn> {
    const previous = this.tails.get(key);
    let end!: () => void;
    const ended = new Promise<void>((resolve) => (end = resolve));
    const tail = (previous ?? Promise.resolve()).then(() => ended);
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    if (previous) await previous;
    const timer = setTimeout(end, this.longestMs);
    timer.unref();
    return {
      end: () => {
        clearTimeout(timer);
        end();
      },
    };
  }
}
