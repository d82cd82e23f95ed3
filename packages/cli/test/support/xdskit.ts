// Runs the built binary (`node bin/xdskit.js`, which loads dist/) as a user would, and reads what it prints.
import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const BIN = fileURLToPath(new URL("../../bin/xdskit.js", import.meta.url));

export interface Finished {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export interface Running {
  /** Everything printed so far. */
  readonly stdout: () => string;
  readonly stderr: () => string;
  /** Resolves with the output once `pattern` matches it (stdout, or stderr with `from`); rejects after `timeoutMs`. */
  waitFor(pattern: RegExp, options?: { from?: "stdout" | "stderr"; timeoutMs?: number }): Promise<string>;
  /** Sends SIGINT (Ctrl-C) and resolves when the process has exited. */
  interrupt(): Promise<Finished>;
  /** Resolves when the process exits by itself. */
  readonly finished: Promise<Finished>;
  /** Kills it if it still runs (teardown). */
  kill(): void;
}

const running = new Set<ChildProcess>();

/** Starts `xdskit <args>`. Call `killAll()` in afterAll/afterEach. */
export function startXdskit(args: readonly string[], env: Record<string, string> = {}): Running {
  const child = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, ...env }, stdio: "pipe" });
  running.add(child);
  let stdout = "";
  let stderr = "";
  const listeners = new Set<() => void>();
  const notify = () => {
    for (const listener of listeners) listener();
  };
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    stdout += chunk;
    notify();
  });
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
    notify();
  });
  const finished = new Promise<Finished>((resolve) => {
    child.on("close", (code) => {
      running.delete(child);
      notify();
      resolve({ code, stdout, stderr });
    });
  });
  return {
    stdout: () => stdout,
    stderr: () => stderr,
    waitFor(pattern, { from = "stdout", timeoutMs = 10_000 } = {}) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const text = from === "stdout" ? stdout : stderr;
          if (pattern.test(text)) {
            done();
            resolve(text);
          } else if (child.exitCode !== null) {
            done();
            reject(new Error(`xdskit exited (${child.exitCode}) before ${pattern}:\n${stdout}\n${stderr}`));
          }
        };
        const timer = setTimeout(() => {
          done();
          reject(new Error(`no ${pattern} from xdskit ${args.join(" ")} in ${timeoutMs} ms:\n${stdout}\n${stderr}`));
        }, timeoutMs);
        const done = () => {
          clearTimeout(timer);
          listeners.delete(check);
        };
        listeners.add(check);
        check();
      });
    },
    interrupt() {
      child.kill("SIGINT");
      return finished;
    },
    finished,
    kill: () => child.kill("SIGKILL"),
  };
}

/** Runs `xdskit <args>` to completion. */
export function runXdskit(args: readonly string[], env: Record<string, string> = {}): Promise<Finished> {
  return startXdskit(args, env).finished;
}

export function killAll(): void {
  for (const child of running) child.kill("SIGKILL");
}
