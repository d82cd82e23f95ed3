// The half of the client that speaks the protocol: protobuf-es and the envoy discovery messages, the ADS calls, the
// decoding of responses, the rules that apply them to the cache, the constraint matcher and the Node message. None
// of it is needed to create a client or to watch; protocol-loader.ts loads this module when a channel first starts
// an ADS call (or CSDS is asked for before that), so importing and creating a client stays cheap. CSDS's own
// messages (csds-dump.ts) load when CSDS is first asked for.
export { canonicalText, comparePreference, matches, specificity, TRUE } from "@xdskit/constraint-matcher";
export { createDeltaCall } from "../calls/delta-call.js";
export { createSotwCall } from "../calls/sotw-call.js";
export { DecodeMemo } from "../wire/decode-memo.js";
export { applyDeletion, applyResource, applyResourceError, applyTimeout, reapplyIdentical } from "./cache-updates.js";
export { buildNode } from "./node.js";
