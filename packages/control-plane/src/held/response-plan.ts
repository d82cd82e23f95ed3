import type { HeldState } from "./held-state.js";

/**
 * What a stream of one type gets next, from what its client holds: the same for every stream that holds the same
 * state, subscribes alike and reads the same version of the type, so it is worked out once for all of them.
 */
export interface ResponsePlan<Content> {
  /** Whether there is anything to send. */
  readonly send: boolean;
  /** Nothing may be sent yet, not even a response a protocol sends when empty (resources/served.ts). */
  readonly waiting?: boolean;
  /** What would be sent (also when `send` is false: a SotW wildcard's first response goes out even when empty). */
  readonly content: Content;
  /** What the client holds once `content` is sent. The same object for every stream that sends this plan. */
  next(): HeldState;
}

export interface PlanCache {
  /**
   * The plan for a stream whose client holds `held`, under `slot` (the subscription's key: type and names) at
   * `version` of the type's resources; `compute` runs only when no stream in the same place asked before. It is
   * told the version `held` is settled at, if known: a plan under this slot led to `held` at that version, so only
   * what changed since can be due.
   */
  plan<Content>(
    held: HeldState,
    slot: string,
    version: string,
    compute: (settledAt: string | undefined) => PlanInit<Content>,
  ): ResponsePlan<Content>;
}

export interface PlanInit<Content> {
  readonly send: boolean;
  readonly waiting?: boolean;
  /** Builds the content, once, when a stream reads it (a plan with nothing to send is rarely read). */
  readonly content: () => Content;
  readonly next: () => HeldState;
}

/** Subscription keys one held state keeps plans for; more (streams of one state subscribing in many ways) evict. */
const SLOTS_PER_STATE = 16;

/**
 * Plans memoized on the held state they start from (weakly: a state no stream holds takes its plans with it), one
 * per slot, replaced when the version moves on. A plan holds the state it leads to weakly, so a stream stuck on an
 * old state does not keep the chain of every later state alive; a state collected meanwhile is computed again.
 * One cache per server and protocol: versions are numbered per server.
 */
interface Slot {
  readonly version: string;
  readonly plan: ResponsePlan<unknown>;
  /** The version a plan under this slot led to this state at. */
  readonly settledAt: string | undefined;
}

export function createPlanCache(): PlanCache {
  const memo = new WeakMap<HeldState, Map<string, Slot>>();
  const remember = (held: HeldState, slot: string, entry: Slot): void => {
    let slots = memo.get(held);
    if (!slots) {
      slots = new Map();
      memo.set(held, slots);
    }
    slots.delete(slot);
    if (slots.size >= SLOTS_PER_STATE) slots.delete(slots.keys().next().value as string);
    slots.set(slot, entry);
  };
  return {
    plan<Content>(
      held: HeldState,
      slot: string,
      version: string,
      compute: (settledAt: string | undefined) => PlanInit<Content>,
    ) {
      const cached = memo.get(held)?.get(slot);
      if (cached?.version === version) return cached.plan as ResponsePlan<Content>;
      const settledAt = cached?.settledAt;
      const init = compute(settledAt);
      let nextRef: WeakRef<HeldState> | undefined;
      let content: Content | undefined;
      let built = false;
      const contentOf = (): Content => {
        if (!built) {
          content = init.content();
          built = true;
        }
        return content as Content;
      };
      const plan: ResponsePlan<Content> = {
        send: init.send,
        ...(init.waiting ? { waiting: true } : {}),
        get content() {
          return contentOf();
        },
        next() {
          let next = nextRef?.deref();
          if (next === undefined) {
            next = init.next();
            nextRef = new WeakRef(next);
            // A client that got this plan holds everything of the version: from there, at the same version,
            // nothing is due (the ACK of this response needs no second look), and later only what changed since.
            // The content stays the same: for a full-state type that is the state; no other type sends a plan
            // with nothing due.
            if (next !== held) {
              const settled = next;
              remember(settled, slot, {
                version,
                settledAt: version,
                plan: {
                  send: false,
                  get content() {
                    return contentOf();
                  },
                  next: () => settled,
                },
              });
            }
          }
          return next;
        },
      };
      remember(held, slot, { version, plan, settledAt: init.send ? settledAt : version });
      return plan;
    },
  };
}
