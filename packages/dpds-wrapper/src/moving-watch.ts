// One user watch of the wrapper: the watcher, and the inner client's subscription(s) that serve it. When its
// parameters change, it moves make-before-break (docs/decisions.md#dpds-make-before-break):
// - the watcher holds no resource: the old subscription is cancelled and the new one serves it at once;
// - it holds one: the new subscription is opened beside the old one and takes over at its first answer that is a
//   resource or a definite error (see `isDefinite`). Until then the old one keeps serving updates, but what it says
//   against the resource (an error, a deletion, an ambient error other than the servers being unreachable) is held
//   back: the watcher keeps what it has, untroubled, until the new subscription answers.
// - A resource from the new subscription equal to the one the watcher holds is not delivered again. The two
//   subscriptions decode separately, so equal resources are distinct objects: they are compared by structure.
// Every callback of the inner client is forwarded with its return value, so a watcher's promise still holds the
// ADS read (flow control).
import { isDeepStrictEqual } from "node:util";
import { type ResourceResult, type ResourceWatcher, StatusCode, type XdsError } from "@xdskit/xds-client";
import type { WrapperLog } from "./log.js";

export type Parameters = Readonly<Record<string, string>>;

/** Subscribes `watcher` on the inner client with `parameters`; returns the function that cancels it. */
export type Subscribe<T> = (parameters: Parameters, watcher: ResourceWatcher<T>) => () => void;

/** What a watcher callback returns: a promise holds the inner client's next ADS read (flow control). */
export type CallbackResult = void | Promise<void>;

export interface MovingWatch {
  /** Subscribes with `parameters` the first time; afterwards, moves to them if they differ. Returns what a callback it made returned. */
  moveTo(parameters: Parameters): CallbackResult;
  cancel(): void;
}

type HeldBack<T> = { readonly result: ResourceResult<T> } | { readonly ambient: XdsError };

interface Subscription {
  readonly key: string;
  readonly text: string;
  cancel: () => void;
}

/** A stable key for a parameter map: sorted pairs. */
function parametersKey(parameters: Parameters): string {
  return JSON.stringify(
    Object.keys(parameters)
      .sort()
      .map((k) => [k, parameters[k]]),
  );
}

function parametersLabel(parameters: Parameters): string {
  const text = Object.keys(parameters)
    .sort()
    .map((k) => `${k}=${parameters[k]}`)
    .join(",");
  return `{${text}}`;
}

/**
 * An answer that settles the subscription for good: the resource does not exist, was refused by the server
 * (NOT_FOUND or PERMISSION_DENIED, the errors that make A88 drop a cached resource), or the name is unusable.
 * Connectivity problems, a timer set as transient, a NACK and a transient server error leave a cached resource in
 * place in A88, so they do not take a held resource away here either.
 */
function isDefinite(error: XdsError): boolean {
  switch (error.kind) {
    case "connection":
    case "timeout":
    case "nacked":
      return false;
    case "server_error":
      return error.code === StatusCode.NOT_FOUND || error.code === StatusCode.PERMISSION_DENIED;
    default:
      return true;
  }
}

export function createMovingWatch<T>(
  watcher: ResourceWatcher<T>,
  subscribe: Subscribe<T>,
  log: WrapperLog,
  label: string,
): MovingWatch {
  let current: Subscription | undefined;
  let pending: Subscription | undefined;
  /** The resource the watcher holds (boxed: a resource may be any value). */
  let held: { readonly resource: T } | undefined;
  /** The watcher was told an ambient error that nothing has cleared since. */
  let ambientPending = false;
  /** What `current` said against its resource while `pending` was awaited, in order. */
  let heldBack: HeldBack<T>[] = [];
  let active = true;

  const deliver = (result: ResourceResult<T>): CallbackResult => {
    held = result.ok ? { resource: result.resource } : undefined;
    ambientPending = false;
    return watcher.onResourceChanged(result);
  };

  const promote = (): void => {
    const old = current;
    current = pending;
    pending = undefined;
    heldBack = [];
    old?.cancel();
    log.debug(() => `${label}${current?.text}: the new subscription answered; the old one is cancelled`);
  };

  const tellAmbient = (error: XdsError): CallbackResult => {
    ambientPending = true;
    return watcher.onAmbientError(error);
  };

  const fromCurrent = (result: ResourceResult<T>): CallbackResult => {
    if (!result.ok && pending) {
      heldBack.push({ result });
      log.debug(() => `${label}: ${result.error.message}; held back until ${pending?.text} answers`);
      return undefined;
    }
    heldBack = [];
    return deliver(result);
  };

  /** Ambient errors about the old variant are held back during a move; those about the servers are not. */
  const fromCurrentAmbient = (error: XdsError): CallbackResult => {
    if (pending && error.kind !== "connection") {
      heldBack.push({ ambient: error });
      log.debug(() => `${label}: ${error.message}; held back until ${pending?.text} answers`);
      return undefined;
    }
    return tellAmbient(error);
  };

  const fromCurrentCleared = (): CallbackResult => {
    heldBack = heldBack.filter((h) => !("ambient" in h));
    if (!ambientPending) return undefined;
    ambientPending = false;
    return watcher.onAmbientErrorCleared?.();
  };

  /** Back to the old subscription: what it said meanwhile is the watcher's news after all. */
  const replayHeldBack = (): CallbackResult => {
    const replay = heldBack;
    heldBack = [];
    const results = replay.map((h) => ("result" in h ? deliver(h.result) : tellAmbient(h.ambient)));
    const promises = results.filter((r) => r instanceof Promise);
    return promises.length === 0 ? undefined : Promise.all(promises).then(() => undefined);
  };

  const fromPending = (sub: Subscription, result: ResourceResult<T>): CallbackResult => {
    if (result.ok) {
      promote();
      if (!held || !isDeepStrictEqual(held.resource, result.resource)) return deliver(result);
      if (!ambientPending) return undefined;
      // The ambient error was about the old subscription; the new one confirms the resource.
      ambientPending = false;
      return watcher.onAmbientErrorCleared ? watcher.onAmbientErrorCleared() : watcher.onResourceChanged(result);
    }
    if (!held || isDefinite(result.error)) {
      promote();
      return deliver(result);
    }
    log.debug(() => `${label}${sub.text}: ${result.error.message}; the watcher keeps the resource it has`);
    return undefined;
  };

  const open = (parameters: Parameters): Subscription => {
    const sub: Subscription = {
      key: parametersKey(parameters),
      text: parametersLabel(parameters),
      cancel: () => {},
    };
    const inner: ResourceWatcher<T> = {
      onResourceChanged(result) {
        if (!active) return undefined;
        if (sub === current) return fromCurrent(result);
        return sub === pending ? fromPending(sub, result) : undefined;
      },
      onAmbientError(error) {
        return active && sub === current ? fromCurrentAmbient(error) : undefined;
      },
    };
    // A watcher without the method is given the resource again instead, by the inner client, as by a plain one.
    if (watcher.onAmbientErrorCleared) {
      inner.onAmbientErrorCleared = () => (active && sub === current ? fromCurrentCleared() : undefined);
    }
    return Object.assign(sub, { cancel: subscribe(parameters, inner) });
  };

  return {
    moveTo(parameters) {
      if (!active) return undefined;
      const key = parametersKey(parameters);
      if (current === undefined) {
        current = open(parameters);
        return undefined;
      }
      if ((pending ?? current).key === key) return undefined;
      if (pending) {
        pending.cancel();
        pending = undefined;
        if (current.key === key) return replayHeldBack();
      }
      log.debug(() => `${label}: moving from ${current?.text} to ${parametersLabel(parameters)}`);
      if (!held) {
        const old = current;
        current = open(parameters);
        old.cancel();
        return undefined;
      }
      pending = open(parameters);
      return undefined;
    },
    cancel() {
      active = false;
      current?.cancel();
      pending?.cancel();
    },
  };
}
