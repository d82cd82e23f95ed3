// The `rpc-behavior` request metadata gRPC's xDS interop servers obey, so a case can make backends slow, hang or
// fail: `sleep-<seconds>`, `keep-open` (never answer; the call ends when the client gives up), `error-code-<code>`,
// and `succeed-on-retry-attempt-<n>` (answer at once, skipping the rest, on the attempt whose
// `grpc-previous-rpc-attempts` header is n), each optionally prefixed by `hostname=<name> ` to apply on that
// backend only. Several behaviors may be sent, as several values or comma-separated.
import { Code, ConnectError } from "@connectrpc/connect";

export const RPC_BEHAVIOR_HEADER = "rpc-behavior";

export type RpcBehavior =
  | { readonly kind: "sleep"; readonly ms: number }
  | { readonly kind: "keep-open" }
  | { readonly kind: "error"; readonly code: Code }
  | { readonly kind: "succeed-on-attempt"; readonly previousAttempts: number };

/** The behaviors that apply on backend `hostname`, in order; unknown ones are ignored (as the interop server does). */
export function parseRpcBehaviors(value: string | null, hostname: string): RpcBehavior[] {
  if (value === null) return [];
  const behaviors: RpcBehavior[] = [];
  for (const raw of value.split(",")) {
    let item = raw.trim();
    if (item.startsWith("hostname=")) {
      const space = item.indexOf(" ");
      if (space < 0 || item.slice("hostname=".length, space) !== hostname) continue;
      item = item.slice(space + 1).trim();
    }
    const sleep = /^sleep-(\d+(?:\.\d+)?)$/.exec(item);
    const error = /^error-code-(\d+)$/.exec(item);
    const succeed = /^succeed-on-retry-attempt-(\d+)$/.exec(item);
    if (sleep !== null) behaviors.push({ kind: "sleep", ms: Number(sleep[1]) * 1000 });
    else if (item === "keep-open") behaviors.push({ kind: "keep-open" });
    else if (error !== null) behaviors.push({ kind: "error", code: Number(error[1]) as Code });
    else if (succeed !== null) behaviors.push({ kind: "succeed-on-attempt", previousAttempts: Number(succeed[1]) });
  }
  return behaviors;
}

/** Runs the behaviors; resolves when the call may be answered, rejects with the call's error. */
export async function applyRpcBehaviors(
  behaviors: readonly RpcBehavior[],
  signal: AbortSignal,
  previousAttempts: number,
): Promise<void> {
  for (const b of behaviors) {
    if (b.kind === "succeed-on-attempt") {
      if (previousAttempts === b.previousAttempts) return;
      continue;
    }
    if (b.kind === "error") throw new ConnectError(`rpc-behavior: error-code-${b.code}`, b.code);
    await new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        clearTimeout(timer);
        reject(new ConnectError("the client cancelled the call", Code.Canceled));
      };
      const timer =
        b.kind === "sleep"
          ? setTimeout(() => {
              signal.removeEventListener("abort", onAbort);
              resolve();
            }, b.ms)
          : undefined;
      if (signal.aborted) onAbort();
      else signal.addEventListener("abort", onAbort, { once: true });
    });
  }
}
