// Loads protocol.ts when first needed (docs/architecture.md#what-loads-when): a channel awaits `loadProtocol()`
// before its first ADS call; what runs only after a call started (applying responses, expiring subscriptions) uses
// `protocolNow()`, which finds it loaded.
import { loadModule, requireModule } from "./lazy-module.js";
import type * as ProtocolModule from "./protocol.js";

export type Protocol = typeof ProtocolModule;
export type ProtocolLoader = () => Promise<Protocol>;

let loaded: Protocol | undefined;
let loading: Promise<Protocol> | undefined;

/** Loads the protocol module once; a failed load is tried again on the next call. */
export const loadProtocol: ProtocolLoader = () => {
  if (loaded !== undefined) return Promise.resolve(loaded);
  loading ??= loadModule("./protocol.js", (): Promise<Protocol> => import("./protocol.js")).then(
    (module) => {
      loaded = module;
      return module;
    },
    (error: unknown) => {
      loading = undefined;
      throw error;
    },
  );
  return loading;
};

/** The protocol module, now: loaded once a channel started a call, else required here (CSDS before any call). */
export function protocolNow(): Protocol {
  loaded ??= requireModule<Protocol>("./protocol.js");
  return loaded;
}
