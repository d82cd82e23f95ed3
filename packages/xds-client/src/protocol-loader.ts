// Loads protocol.ts when first needed (docs/architecture.md#what-loads-when): a channel awaits `loadProtocol()`
// before its first ADS call; what runs only after a call started (applying responses, expiring subscriptions) uses
// `protocolNow()`, which finds it loaded.
import { createRequire } from "node:module";
import type * as ProtocolModule from "./protocol.js";

export type Protocol = typeof ProtocolModule;
export type ProtocolLoader = () => Promise<Protocol>;

let loaded: Protocol | undefined;
let loading: Promise<Protocol> | undefined;

/** Loads the protocol module once; a failed load is tried again on the next call. */
export const loadProtocol: ProtocolLoader = () => {
  if (loaded !== undefined) return Promise.resolve(loaded);
  loading ??= import("./protocol.js").then(
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

/**
 * The protocol module, now. Once a channel started a call it is loaded; before that (CSDS asked for before any
 * call, or a built-in type's decoder called directly), it is loaded synchronously: `require` of an ES module,
 * which Node supports from 20.19 (the engines field's minimum).
 */
export function protocolNow(): Protocol {
  loaded ??= createRequire(import.meta.url)("./protocol.js") as Protocol;
  return loaded;
}
