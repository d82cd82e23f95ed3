// What the policy cases share: durations, the two methods' paths, `rpc-behavior` metadata, and the checks of
// blocks whose RPCs fail (backends are made slow, hung or failing through rpc-behavior.ts).
import { create } from "@bufbuild/protobuf";
import { DurationSchema } from "@bufbuild/protobuf/wkt";
import type { BlockCheck } from "../checks.js";
import type { RpcMethod } from "../client-adapter.js";
import type { CaseContext } from "../driver.js";
import { RPC_BEHAVIOR_HEADER } from "../rpc-behavior.js";

export const seconds = (s: number) =>
  create(DurationSchema, { seconds: BigInt(Math.floor(s)), nanos: Math.round((s % 1) * 1e9) });
export const UNARY_PATH = { pathSpecifier: { case: "path" as const, value: "/grpc.testing.TestService/UnaryCall" } };
export const EMPTY_PATH = { pathSpecifier: { case: "path" as const, value: "/grpc.testing.TestService/EmptyCall" } };
export const behavior = (value: string) => [[RPC_BEHAVIOR_HEADER, value] as const];

/** Waits until `condition()` holds (polled every 50 ms), failing after the profile's wait with `describe()`. */
export async function eventually(context: CaseContext, what: string, condition: () => boolean, describe: () => string) {
  const deadline = performance.now() + context.profile.waitMs;
  while (!condition()) {
    context.check(
      performance.now() < deadline,
      () => `${what}: did not hold within ${context.profile.waitMs} ms (${describe()})`,
    );
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  context.trace(`${what}: held (${describe()})`);
}

/** Every RPC of the block failed, with `code`. */
export function allFailWith(code: number, alsoAccepted: readonly number[] = []): BlockCheck {
  return (stats) => {
    if (!stats.complete) return "the block did not complete in time";
    const codes = Object.keys(stats.failureCodes);
    if (Object.keys(stats.rpcsByPeer).length > 0) return `RPCs succeeded: ${JSON.stringify(stats.rpcsByPeer)}`;
    return codes.includes(String(code)) && codes.every((c) => c === String(code) || alsoAccepted.includes(Number(c)))
      ? undefined
      : `failure codes ${JSON.stringify(stats.failureCodes)}, not all ${[code, ...alsoAccepted].join(" or ")}`;
  };
}

/** Every RPC of the block failed past its deadline, as this client reports it (`CaseContext.deadlineCodes`). */
export const allPastDeadline = (context: CaseContext): BlockCheck => {
  const [code = 4, ...others] = context.deadlineCodes;
  return allFailWith(code, others);
};

/**
 * The method's RPCs of the block all failed with `codes[0]` (at least one) or another of `codes`, while the other
 * method's all succeeded.
 */
export function methodFailsOtherSucceeds(
  failing: RpcMethod,
  codes: readonly number[],
  succeeding: RpcMethod,
  total: number,
): BlockCheck {
  return (stats) => {
    if (!stats.complete) return "the block did not complete in time";
    const ok = Object.values(stats.rpcsByMethod[succeeding] ?? {}).reduce((a, b) => a + b, 0);
    const failingOk = Object.values(stats.rpcsByMethod[failing] ?? {}).reduce((a, b) => a + b, 0);
    if (failingOk > 0) return `${failingOk} ${failing} RPCs succeeded`;
    const accepted = codes.reduce((sum, code) => sum + (stats.failureCodes[String(code)] ?? 0), 0);
    if (stats.numFailures !== accepted || !stats.failureCodes[String(codes[0])])
      return `failure codes ${JSON.stringify(stats.failureCodes)}, not all ${codes.join(" or ")}`;
    return ok + stats.numFailures === total && ok > 0
      ? undefined
      : `${ok} ${succeeding} succeeded, ${stats.numFailures} failed`;
  };
}

/** RPCs of `method` started and not yet completed. */
export function inFlight(load: ReturnType<CaseContext["startClient"]>, method: RpcMethod): number {
  const acc = load.accumulated();
  const done = Object.values(acc.result[method] ?? {}).reduce((a, b) => a + b, 0);
  return (acc.rpcsStarted[method] ?? 0) - done;
}
