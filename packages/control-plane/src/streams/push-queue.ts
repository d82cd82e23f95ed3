/**
 * An unbounded single-consumer queue: producers push synchronously, the consumer iterates. `end()` finishes the
 * iteration after the queued items; `end(error)` makes the iteration throw once the queue drains.
 */
export class PushQueue<T> implements AsyncIterable<T> {
  #items: T[] = [];
  #head = 0;
  #ended = false;
  #error: unknown;
  #wake: (() => void) | undefined;

  get ended(): boolean {
    return this.#ended;
  }

  /** Returns false (and drops the item) once the queue has ended. */
  push(item: T): boolean {
    if (this.#ended) return false;
    this.#items.push(item);
    this.#signal();
    return true;
  }

  end(error?: unknown): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#error = error;
    this.#signal();
  }

  /** Ends at once, dropping what is queued. */
  abort(error?: unknown): void {
    this.#items = [];
    this.#head = 0;
    this.end(error);
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T, void, undefined> {
    for (;;) {
      if (this.#head < this.#items.length) {
        const item = this.#items[this.#head] as T;
        this.#head++;
        if (this.#head > 1024 && this.#head * 2 > this.#items.length) {
          this.#items = this.#items.slice(this.#head);
          this.#head = 0;
        }
        yield item;
        continue;
      }
      if (this.#ended) {
        if (this.#error !== undefined) throw this.#error;
        return;
      }
      await new Promise<void>((resolve) => {
        this.#wake = resolve;
      });
    }
  }

  #signal(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }
}
