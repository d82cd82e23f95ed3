// Loads protocol.ts when first needed (docs/architecture.md#what-loads-when): a channel awaits `loadProtocol()`
// before its first ADS call; what runs only after a call started (applying responses, expiring subscriptions) uses
// `protocolNow()`, which finds it loaded. CSDS (csds-dump.ts) loads when first asked for.

import { loadModule, loadOnce, requireModule } from "../shared/lazy-module.js";
import type * as CsdsModule from "./csds-dump.js";
import type * as ProtocolModule from "./protocol.js";

export type Protocol = typeof ProtocolModule;
export type ProtocolLoader = () => Promise<Protocol>;

let loaded: Protocol | undefined;

/** Loads the protocol module once; a failed load is tried again on the next call. */
export const loadProtocol: ProtocolLoader = loadOnce(() =>
  loadModule("../protocol/protocol.js", (): Promise<Protocol> => import("./protocol.js")).then((module) => {
    loaded ??= module;
    return module;
  }),
);

/** The protocol module, now: loaded once a channel started a call, else required here (CSDS before any call). */
export function protocolNow(): Protocol {
  loaded ??= requireModule<Protocol>("../protocol/protocol.js");
  return loaded;
}

type Csds = typeof CsdsModule;
let csds: Csds | undefined;

/** CSDS's module, now (`dumpResources()` is synchronous). */
export function csdsNow(): Csds {
  csds ??= requireModule<Csds>("../protocol/csds-dump.js");
  return csds;
}

/** Loads CSDS's module ahead of `csdsNow()`, for where `require` cannot load it (see lazy-module.ts). */
export async function loadCsds(): Promise<void> {
  csds ??= await loadModule("../protocol/csds-dump.js", (): Promise<Csds> => import("./csds-dump.js"));
}
