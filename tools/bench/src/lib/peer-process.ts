// Benchmarks made of several processes: the top level forks its own file with `--role <name>`, and each peer answers
// messages in order. A peer's failure ends the benchmark.
import { type ChildProcess, fork } from "node:child_process";

export type Message = { readonly type: string; readonly [key: string]: unknown };

/** Milliseconds on a clock every process of the machine shares (for latencies measured across processes). */
export const now = (): number => performance.timeOrigin + performance.now();

/** Heap used after two forced GCs (the processes run with --expose-gc). */
export const heapAfterGc = (): number => {
  globalThis.gc?.();
  globalThis.gc?.();
  return process.memoryUsage().heapUsed;
};

/** A child process of `file` in `role`; messages awaited in order, by type. */
export class Peer {
  readonly #child: ChildProcess;
  readonly #queue: Message[] = [];
  readonly #waiting: ((message: Message) => void)[] = [];
  readonly role: string;

  constructor(file: string, role: string, args: readonly string[] = []) {
    this.role = role;
    this.#child = fork(file, ["--role", role, ...args], {
      execArgv: ["--expose-gc", "--max-old-space-size=4096"],
      stdio: "inherit",
    });
    this.#child.on("message", (message: Message) => {
      if (message.type === "failed") {
        process.stderr.write(`${role} failed: ${String(message.error)}\n`);
        process.exit(1);
      }
      const waiter = this.#waiting.shift();
      if (waiter) waiter(message);
      else this.#queue.push(message);
    });
  }

  get pid(): number | undefined {
    return this.#child.pid;
  }

  send(message: Message): void {
    this.#child.send(message);
  }

  async ask<T extends Message>(message: Message | undefined, type: string): Promise<T> {
    if (message) this.send(message);
    const next = this.#queue.shift() ?? (await new Promise<Message>((resolve) => this.#waiting.push(resolve)));
    if (next.type !== type) throw new Error(`${this.role}: expected ${type}, got ${next.type}`);
    return next as T;
  }

  /**
   * The next message, of `type`, or undefined when none came within `ms`: then the waiter is withdrawn, and a message
   * that comes later is left for the next `ask` (a waiter left behind would take the answer meant for the next one).
   */
  async askWithin<T extends Message>(type: string, ms: number): Promise<T | undefined> {
    const queued = this.#queue.shift();
    const next =
      queued ??
      (await new Promise<Message | undefined>((resolve) => {
        const waiter = (message: Message) => {
          clearTimeout(timer);
          resolve(message);
        };
        const timer = setTimeout(() => {
          this.#waiting.splice(this.#waiting.indexOf(waiter), 1);
          resolve(undefined);
        }, ms);
        this.#waiting.push(waiter);
      }));
    if (next !== undefined && next.type !== type) throw new Error(`${this.role}: expected ${type}, got ${next.type}`);
    return next as T | undefined;
  }

  /** Sends `message` and waits for an answer of `type`, dropping the messages of type `drop` that come before it. */
  async askDropping<T extends Message>(message: Message, type: string, drop: string): Promise<T> {
    this.send(message);
    for (;;) {
      const next = this.#queue.shift() ?? (await new Promise<Message>((resolve) => this.#waiting.push(resolve)));
      if (next.type === type) return next as T;
      if (next.type !== drop) throw new Error(`${this.role}: expected ${type}, got ${next.type}`);
    }
  }

  /** SIGKILL (a crash), resolved once the process is gone. */
  crash(): Promise<void> {
    return new Promise((resolve) => {
      if (this.#child.exitCode !== null || this.#child.signalCode !== null) return resolve();
      this.#child.once("exit", () => resolve());
      this.#child.kill("SIGKILL");
    });
  }

  kill(): void {
    this.#child.kill();
  }
}

/** In a peer: handles each message from the parent; a thrown error is reported as `failed`. */
export function serve(handle: (message: Message, send: (message: Message) => void) => Promise<void>): void {
  const send = (message: Message): void => {
    process.send?.(message);
  };
  process.on("message", (message: Message) => {
    handle(message, send).catch((error: unknown) => send({ type: "failed", error: String(error) }));
  });
}

/** The `--role` this process was forked with, if any. */
export function roleOf(): string | undefined {
  const at = process.argv.indexOf("--role");
  return at > 0 ? process.argv[at + 1] : undefined;
}

/** A number option (`--name 10`), or `fallback`. */
export function numberOption(name: string, fallback: number): number {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? Number(process.argv[at + 1]) : fallback;
}

/** The value at `q` (0..1) of sorted `values`. */
export function quantile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))] ?? 0;
}
