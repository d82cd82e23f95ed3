// The process layout of the control-plane benchmarks: the top level runs each server kind in a process of its own
// (so the RSS measured is that server's alone), which forks a process for the clients.
import { type ChildProcess, execFileSync, fork } from "node:child_process";

const RESULT_PREFIX = "RESULT ";

/** The server process's end of its client process: messages in order, each awaited by type. */
export class ClientProcess<ToChild, ToParent extends { readonly type: string }> {
  readonly #child: ChildProcess;
  readonly #waiting: ((message: ToParent) => void)[] = [];
  readonly #timeoutMs: number;

  /** Forks `file` with `--child`; a `{ type: "failed", error }` message from it ends this process. */
  constructor(file: string, timeoutMs: number) {
    this.#timeoutMs = timeoutMs;
    this.#child = fork(file, ["--child"], { stdio: "inherit" });
    this.#child.on("message", (message: ToParent) => {
      if (message.type === "failed") {
        process.stderr.write(`client process failed: ${(message as { error?: string }).error}\n`);
        process.exit(1);
      }
      this.#waiting.shift()?.(message);
    });
  }

  next<T extends ToParent["type"]>(type: T): Promise<Extract<ToParent, { type: T }>> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out waiting for "${type}"`)), this.#timeoutMs);
      this.#waiting.push((message) => {
        clearTimeout(timer);
        if (message.type === type) resolve(message as Extract<ToParent, { type: T }>);
        else reject(new Error(`expected "${type}", got "${message.type}"`));
      });
    });
  }

  send(message: ToChild): void {
    this.#child.send(message as object);
  }
}

/**
 * The client process's side: `handle` gets each message from the server process; a failure is reported as
 * `{ type: "failed", error }` (which ends the server process). Announces itself with `{ type: "ready" }`.
 */
export function serveServerProcess<ToChild, ToParent>(
  handle: (message: ToChild, send: (message: ToParent) => void) => Promise<void>,
): void {
  const send = (message: ToParent | { type: "failed"; error: string } | { type: "ready" }): void => {
    process.send?.(message);
  };
  process.on("message", async (message: ToChild) => {
    try {
      await handle(message, send);
    } catch (error) {
      send({ type: "failed", error: String(error) });
    }
  });
  send({ type: "ready" });
}

/** Peak RSS of this process while `work` runs, sampled every 10 ms. */
export async function withPeakRss<T>(work: () => Promise<T>): Promise<{ result: T; peakRss: number }> {
  let peakRss = process.memoryUsage.rss();
  const timer = setInterval(() => {
    peakRss = Math.max(peakRss, process.memoryUsage.rss());
  }, 10);
  try {
    const result = await work();
    peakRss = Math.max(peakRss, process.memoryUsage.rss());
    return { result, peakRss };
  } finally {
    clearInterval(timer);
  }
}

/** Runs `file` with `args` (and --expose-gc) in a process of its own and returns what it `printResult`ed. */
export function runInOwnProcess<T>(file: string, args: readonly string[], timeoutMs: number): T {
  const output = execFileSync(process.execPath, ["--expose-gc", file, ...args], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
    timeout: timeoutMs,
  });
  const line = output.split("\n").find((l) => l.startsWith(RESULT_PREFIX));
  if (!line) throw new Error(`no result from ${file} ${args.join(" ")}:\n${output}`);
  return JSON.parse(line.slice(RESULT_PREFIX.length)) as T;
}

/** What a process started by `runInOwnProcess` reports. */
export function printResult(result: unknown): void {
  process.stdout.write(`${RESULT_PREFIX}${JSON.stringify(result)}\n`);
}

/** The top-level fields a benchmark client needs of a response: how many `resources` (field 2), and the nonce (5). */
export function scanResponse(bytes: Buffer): { resources: number; nonce: string } {
  let pos = 0;
  let resources = 0;
  let nonce = "";
  const varint = (): number => {
    let value = 0;
    for (let shift = 0; ; shift += 7) {
      const byte = bytes[pos++] as number;
      value += (byte & 0x7f) * 2 ** shift;
      if (byte < 0x80) return value;
    }
  };
  while (pos < bytes.length) {
    const tag = varint();
    if ((tag & 7) === 0) {
      varint();
      continue;
    }
    const length = varint();
    if (tag >>> 3 === 2) resources++;
    else if (tag >>> 3 === 5) nonce = bytes.toString("utf8", pos, pos + length);
    pos += length;
  }
  return { resources, nonce };
}
