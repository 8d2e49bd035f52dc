/**
 * Questions to a child (or a parent) awaiting their answers by id: each answered once, or with null
 * when none can come (the child was replaced, or the question's time ran out). A question may name
 * what it is `about`: then only an answer naming the same is taken (ids alone start again from 0 in a
 * fresh process, so an answer meant for a predecessor's question could carry the same id).
 */
export class PendingAnswers<T = unknown> {
  private readonly waiting = new Map<number, { resolve: (value: T | null) => void; about: string | undefined }>();
  private nextId = 0;

  /** A fresh question: its id (to send) and its answer. */
  ask(timeoutMs?: number, about?: string): { id: number; answer: Promise<T | null> } {
    const id = this.nextId++;
    const answer = new Promise<T | null>((resolve) => this.waiting.set(id, { resolve, about }));
    if (timeoutMs !== undefined) setTimeout(() => this.settle(id, null), timeoutMs).unref();
    return { id, answer };
  }

  /** Answers question `id`, unless it was asked `about` something other than `about`. */
  answer(id: number, value: T | null, about?: string): void {
    const waiting = this.waiting.get(id);
    if (waiting?.about !== undefined && waiting.about !== about) return;
    this.settle(id, value);
  }

  /** The child that was asked is gone: every open question gets null. */
  dropAll(): void {
    for (const { resolve } of this.waiting.values()) resolve(null);
    this.waiting.clear();
  }

  private settle(id: number, value: T | null): void {
    this.waiting.get(id)?.resolve(value);
    this.waiting.delete(id);
  }
}
