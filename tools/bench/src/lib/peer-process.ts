// The benchmarks that run their parts in processes of their own (a control plane, relays, clients): one child process
// per role, forked from the benchmark's own file with `--role <role>`, talking in typed messages.
import { type ChildProcess, fork } from "node:child_process";

/** Milliseconds on a clock the processes of one machine share (`performance.timeOrigin + performance.now()`). */
export const now = (): number => performance.timeOrigin + performance.now();

/** Heap used after two forced GCs (the processes run with --expose-gc). */
export const heapAfterGc = (): number => {
  globalThis.gc?.();
  globalThis.gc?.();
  return process.memoryUsage().heapUsed;
};

export type Message = { readonly type: string; readonly [key: string]: unknown };

/** A child process of `file` with a role; messages awaited in order, by type. */
export class Peer {
  readonly #child: ChildProcess;
  readonly #queue: Message[] = [];
  readonly #waiting: ((message: Message) => void)[] = [];

  constructor(file: string, role: string) {
    this.#child = fork(file, ["--role", role], {
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

  send(message: Message): void {
    this.#child.send(message);
  }

  async ask<T extends Message>(message: Message | undefined, type: string): Promise<T> {
    if (message) this.send(message);
    const next = this.#queue.shift() ?? (await new Promise<Message>((resolve) => this.#waiting.push(resolve)));
    if (next.type !== type) throw new Error(`expected ${type}, got ${next.type}`);
    return next as T;
  }

  kill(): void {
    this.#child.kill();
  }
}

/** In a child: handles each message from the parent; a failure is reported to it (which exits). */
export function serve(handle: (message: Message, send: (message: Message) => void) => Promise<void>): void {
  const send = (message: Message): void => {
    process.send?.(message);
  };
  process.on("message", (message: Message) => {
    handle(message, send).catch((error: unknown) => send({ type: "failed", error: String(error) }));
  });
}
