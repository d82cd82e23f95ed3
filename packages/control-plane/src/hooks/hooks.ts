import type { MessageInitShape } from "@bufbuild/protobuf";
import type {
  DeltaDiscoveryResponseSchema,
  DiscoveryResponseSchema,
} from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";
import type { Logger } from "../logger.js";
import { clearLongTimer, setLongTimeout } from "../long-timer.js";
import {
  describeHookEvent,
  type HookEvent,
  type HookEventInit,
  type HookEventMap,
  type RequestEvent,
  type ResponseDelivery,
  type ResponseEvent,
  type StreamCloseEvent,
  type StreamOpenEvent,
} from "./hook-events.js";

// The test hooks' behaviour: event history and waits, listeners, hold/drop routing of responses, and the levers
// (break, abort, inject) the server lends them. The events themselves are described in hook-events.ts.

/** Selects responses for hold/drop: every field given must match. */
export interface ResponseFilter {
  readonly typeUrl?: string;
  readonly streamId?: number;
}

export interface WaitOptions {
  /** Default 5000. */
  readonly timeoutMs?: number;
  /** Only events with a `seq` above this one (see `mark()`). Default 0: the whole retained history. */
  readonly after?: number;
}

export interface BreakOptions {
  /** Only this stream; default every stream. */
  readonly streamId?: number;
  /** The status code to end with (connect's `Code` works). 0 ends the stream with OK. Default UNAVAILABLE (14). */
  readonly code?: number;
  readonly message?: string;
}

/** What tests use to watch and disturb the server. Everything here is for tests; none of it is needed to serve. */
export interface ManagementServerHooks {
  /** Calls `listener` for each event of a type. Returns the function that removes it. A throwing listener is logged. */
  on<K extends keyof HookEventMap>(type: K, listener: (event: HookEventMap[K]) => void): () => void;
  /** The retained events (the last `historyLimit`), oldest first. */
  history(): readonly HookEvent[];
  requests(): RequestEvent[];
  responses(): ResponseEvent[];
  /** The `seq` of the latest event: pass it as `after` to wait only for what happens next. */
  mark(): number;
  /**
   * Resolves with the first request (after `options.after`) that satisfies `predicate`; rejects on timeout with the
   * latest events. `options` may be just the timeout in ms.
   */
  waitForRequest(predicate?: (event: RequestEvent) => boolean, options?: WaitOptions | number): Promise<RequestEvent>;
  waitForResponse(
    predicate?: (event: ResponseEvent) => boolean,
    options?: WaitOptions | number,
  ): Promise<ResponseEvent>;
  waitForStreamOpen(
    predicate?: (event: StreamOpenEvent) => boolean,
    options?: WaitOptions | number,
  ): Promise<StreamOpenEvent>;
  waitForStreamClose(
    predicate?: (event: StreamCloseEvent) => boolean,
    options?: WaitOptions | number,
  ): Promise<StreamCloseEvent>;
  /**
   * Holds back the responses that match (all, by default): they are built as usual (nonce and versions advance) but
   * not written until `release()`, like a slow network.
   */
  hold(filter?: ResponseFilter): void;
  /** Lifts the holds that `filter` covers (all, by default) and writes what they held back, in order. */
  release(filter?: ResponseFilter): void;
  /**
   * Drops the next `count` matching responses (default: all until `stopDropping()`). A dropped response counts as
   * sent: the server will not send it again, like a lost message.
   */
  drop(filter?: ResponseFilter, count?: number): void;
  stopDropping(): void;
  /** Ends streams with a status (OK ends them cleanly). Returns how many were ended. */
  breakStreams(options?: BreakOptions): number;
  /** Destroys every HTTP/2 connection at once, without trailers. Returns how many there were. */
  abortConnections(): number;
  /**
   * Writes a response of your own on a stream, bypassing the resource sets: anything a client must cope with
   * (duplicate names, foreign types, garbage). A missing nonce is assigned. The nonce becomes the latest of its
   * type, so the client's ACK or NACK of it is taken; what the server believes the client holds is unchanged.
   * Returns the nonce. The response is reported like any other (and subject to hold and drop); for SotW its event
   * lists no `resourceNames` (the server does not decode what you inject).
   */
  injectResponse(
    streamId: number,
    response: MessageInitShape<typeof DiscoveryResponseSchema> | MessageInitShape<typeof DeltaDiscoveryResponseSchema>,
  ): string;
}

export type InjectedResponse =
  | MessageInitShape<typeof DiscoveryResponseSchema>
  | MessageInitShape<typeof DeltaDiscoveryResponseSchema>;

export interface HooksHost {
  breakStreams(options: BreakOptions): number;
  abortConnections(): number;
  releaseHeld(): void;
  injectResponse(streamId: number, response: InjectedResponse): string;
}

interface Waiter {
  readonly test: (event: HookEvent) => boolean;
  readonly after: number;
  readonly resolve: (event: HookEvent) => void;
  readonly cancel: (reason: string) => void;
}

interface DropRule {
  readonly filter: ResponseFilter;
  remaining: number;
}

function matchesFilter(filter: ResponseFilter, streamId: number, typeUrl: string): boolean {
  return (
    (filter.typeUrl === undefined || filter.typeUrl === typeUrl) &&
    (filter.streamId === undefined || filter.streamId === streamId)
  );
}

function covers(outer: ResponseFilter, inner: ResponseFilter): boolean {
  return (
    (outer.typeUrl === undefined || outer.typeUrl === inner.typeUrl) &&
    (outer.streamId === undefined || outer.streamId === inner.streamId)
  );
}

export class HooksImpl implements ManagementServerHooks {
  readonly #logger: Logger;
  readonly #historyLimit: number;
  readonly #history: HookEvent[] = [];
  readonly #listeners = new Map<string, Set<(event: never) => void>>();
  readonly #waiters = new Set<Waiter>();
  readonly #holds: ResponseFilter[] = [];
  readonly #drops: DropRule[] = [];
  #seq = 0;
  #host: HooksHost | undefined;

  constructor(logger: Logger, historyLimit: number) {
    this.#logger = logger;
    this.#historyLimit = historyLimit;
  }

  attach(host: HooksHost): void {
    this.#host = host;
  }

  /** Numbers the event (it becomes the event object: callers hand over a fresh one) and reports it. */
  emit(init: HookEventInit): HookEvent {
    const event = Object.assign(init, { seq: ++this.#seq }) as HookEvent;
    if (this.#historyLimit > 0) {
      this.#history.push(event);
      if (this.#history.length > this.#historyLimit * 1.25) {
        this.#history.splice(0, this.#history.length - this.#historyLimit);
      }
    }
    if (this.#waiters.size > 0) this.#notifyWaiters(event);
    const listeners = this.#listeners.get(event.type);
    if (listeners) {
      for (const listener of [...listeners]) {
        try {
          (listener as (event: HookEvent) => void)(event);
        } catch (error) {
          this.#logger.error(`hook listener for ${event.type} threw`, error);
        }
      }
    }
    return event;
  }

  #notifyWaiters(event: HookEvent): void {
    for (const waiter of [...this.#waiters]) {
      if (event.seq > waiter.after && waiter.test(event)) {
        this.#waiters.delete(waiter);
        waiter.resolve(event);
      }
    }
  }

  /** Decides the fate of a response about to be written. Drop rules win over holds. */
  route(streamId: number, typeUrl: string): ResponseDelivery {
    for (const rule of this.#drops) {
      if (rule.remaining > 0 && matchesFilter(rule.filter, streamId, typeUrl)) {
        rule.remaining--;
        if (rule.remaining === 0) this.#drops.splice(this.#drops.indexOf(rule), 1);
        return "dropped";
      }
    }
    return this.isHeld(streamId, typeUrl) ? "held" : "sent";
  }

  isHeld(streamId: number, typeUrl: string): boolean {
    return this.#holds.some((filter) => matchesFilter(filter, streamId, typeUrl));
  }

  on<K extends keyof HookEventMap>(type: K, listener: (event: HookEventMap[K]) => void): () => void {
    let set = this.#listeners.get(type);
    if (!set) {
      set = new Set();
      this.#listeners.set(type, set);
    }
    set.add(listener);
    return () => {
      set.delete(listener);
    };
  }

  history(): readonly HookEvent[] {
    return [...this.#history];
  }

  requests(): RequestEvent[] {
    return this.#history.filter((e): e is RequestEvent => e.type === "request");
  }

  responses(): ResponseEvent[] {
    return this.#history.filter((e): e is ResponseEvent => e.type === "response");
  }

  mark(): number {
    return this.#seq;
  }

  waitForRequest(predicate?: (event: RequestEvent) => boolean, options?: WaitOptions | number): Promise<RequestEvent> {
    return this.#waitFor("request", predicate, options);
  }

  waitForResponse(
    predicate?: (event: ResponseEvent) => boolean,
    options?: WaitOptions | number,
  ): Promise<ResponseEvent> {
    return this.#waitFor("response", predicate, options);
  }

  waitForStreamOpen(
    predicate?: (event: StreamOpenEvent) => boolean,
    options?: WaitOptions | number,
  ): Promise<StreamOpenEvent> {
    return this.#waitFor("stream-open", predicate, options);
  }

  waitForStreamClose(
    predicate?: (event: StreamCloseEvent) => boolean,
    options?: WaitOptions | number,
  ): Promise<StreamCloseEvent> {
    return this.#waitFor("stream-close", predicate, options);
  }

  hold(filter: ResponseFilter = {}): void {
    this.#holds.push({ ...filter });
  }

  release(filter: ResponseFilter = {}): void {
    for (let i = this.#holds.length - 1; i >= 0; i--) {
      if (covers(filter, this.#holds[i] as ResponseFilter)) this.#holds.splice(i, 1);
    }
    this.#host?.releaseHeld();
  }

  drop(filter: ResponseFilter = {}, count = Number.POSITIVE_INFINITY): void {
    if (!(count > 0)) throw new RangeError("drop: count must be positive");
    this.#drops.push({ filter: { ...filter }, remaining: count });
  }

  stopDropping(): void {
    this.#drops.length = 0;
  }

  breakStreams(options: BreakOptions = {}): number {
    return this.#host?.breakStreams(options) ?? 0;
  }

  abortConnections(): number {
    return this.#host?.abortConnections() ?? 0;
  }

  injectResponse(streamId: number, response: InjectedResponse): string {
    if (!this.#host) throw new Error("injectResponse: the server is not running");
    return this.#host.injectResponse(streamId, response);
  }

  /** Rejects every pending wait (the server is closing). */
  cancelWaits(reason: string): void {
    for (const waiter of this.#waiters) waiter.cancel(reason);
    this.#waiters.clear();
    this.#logger.debug(`pending waits cancelled: ${reason}`);
  }

  #waitFor<K extends keyof HookEventMap>(
    type: K,
    predicate: ((event: HookEventMap[K]) => boolean) | undefined,
    optionsOrTimeout: WaitOptions | number = {},
  ): Promise<HookEventMap[K]> {
    const options = typeof optionsOrTimeout === "number" ? { timeoutMs: optionsOrTimeout } : optionsOrTimeout;
    const after = options.after ?? 0;
    const timeoutMs = options.timeoutMs ?? 5000;
    const test = (event: HookEvent): boolean =>
      event.type === type && (predicate === undefined || predicate(event as HookEventMap[K]));
    for (const event of this.#history) {
      if (event.seq > after && test(event)) return Promise.resolve(event as HookEventMap[K]);
    }
    return new Promise<HookEventMap[K]>((resolve, reject) => {
      // The caller's wait: any length (docs/decisions.md#long-timers).
      const timer = setLongTimeout(() => {
        this.#waiters.delete(waiter);
        const recent = this.#history
          .filter((e) => e.seq > after)
          .slice(-12)
          .map(describeHookEvent);
        reject(
          new Error(
            `timed out after ${timeoutMs} ms waiting for a matching ${type} event; latest events:\n  ${recent.join("\n  ") || "(none)"}`,
          ),
        );
      }, timeoutMs);
      const waiter: Waiter = {
        test,
        after,
        resolve: (event) => {
          clearLongTimer(timer);
          resolve(event as HookEventMap[K]);
        },
        cancel: (reason) => {
          clearLongTimer(timer);
          reject(new Error(`${reason} while waiting for a ${type} event`));
        },
      };
      this.#waiters.add(waiter);
    });
  }
}
