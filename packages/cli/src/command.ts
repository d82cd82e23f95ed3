// What every command shares: the I/O it gets, its errors, exit codes and option helpers. No Node types here: this
// file's declarations are part of the package's public types.

import { clearLongTimer, setLongTimeout } from "./long-timer.js";

/** Exit codes: 0 success, 1 the command failed, 2 the command line is wrong. */
export const ExitCode = { ok: 0, failure: 1, usage: 2 } as const;

export interface CliIo {
  /** Writes text as is (commands end their lines with "\n"). */
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  /** Environment variables (`GRPC_XDS_BOOTSTRAP`, `GRPC_XDS_BOOTSTRAP_CONFIG`). */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Aborted on Ctrl-C: long-running commands (`serve`, `watch`, `csds --watch`) then end with exit code 0. */
  readonly signal: AbortSignal;
}

/** A mistake on the command line: printed with the command's usage, exit code 2. */
export class UsageError extends Error {
  override readonly name = "UsageError";
}

/** A failure the user can act on: printed as is (no stack), exit code 1. */
export class CliError extends Error {
  override readonly name = "CliError";
}

export type CommandRun = (
  positionals: string[],
  values: Record<string, string | boolean | undefined>,
  io: CliIo,
) => Promise<number>;

export interface CommandSpec {
  readonly summary: string;
  readonly usage: string;
  /** node:util parseArgs options; `--help` is added to every command. */
  readonly options: Readonly<Record<string, { readonly type: "string" | "boolean"; readonly short?: string }>>;
  readonly load: () => Promise<CommandRun>;
}

/** A non-negative integer option, or a UsageError naming it. */
export function integerOption(values: Record<string, unknown>, name: string, fallback: number): number {
  const raw = values[name];
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (typeof raw !== "string" || !/^\d+$/.test(raw) || !Number.isSafeInteger(value)) {
    throw new UsageError(`--${name} must be a non-negative integer, got "${String(raw)}"`);
  }
  return value;
}

const DURATION_UNITS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000 };

/**
 * A duration option in milliseconds (`500ms`, `10s`, `1.5m`; a bare number is seconds, as grpcurl's `-max-time`),
 * undefined when absent, or a UsageError naming it.
 */
export function durationOption(values: Record<string, unknown>, name: string): number | undefined {
  const raw = values[name];
  if (raw === undefined) return undefined;
  const match = typeof raw === "string" ? /^(\d+(?:\.\d+)?)(ms|s|m)?$/.exec(raw) : null;
  const ms = match ? Math.round(Number(match[1]) * DURATION_UNITS[match[2] ?? "s"]!) : Number.NaN;
  if (!(ms > 0) || !Number.isSafeInteger(ms)) {
    throw new UsageError(`--${name} must be a duration such as 500ms, 10s or 2m, got "${String(raw)}"`);
  }
  return ms;
}

/** Resolves after `ms` (any length: docs/decisions.md#long-timers), or as soon as `signal` aborts. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearLongTimer(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setLongTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}

/** Resolves when `signal` aborts (at once if it already has). */
export function aborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener("abort", () => resolve(), { once: true });
  });
}
