/** At most `size` tasks at once in this process; the rest wait in arrival order. */
export class Slots {
  private active = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(readonly size: number) {}

  get running(): number {
    return this.active;
  }

  get queued(): number {
    return this.waiting.length;
  }

  get full(): boolean {
    return this.active >= this.size;
  }

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.active >= this.size) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.active++;
    try {
      return await task();
    } finally {
      const next = this.waiting.shift();
      // The slot passes straight to the next task; `active` only drops when nobody waits.
      if (next) next();
      else this.active--;
    }
  }
}
