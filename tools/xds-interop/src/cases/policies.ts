// The cases of issue 21 (proxyless features beyond routing): circuit_breaking and timeout as
// doc/xds-test-descriptions.md writes them, and, in the same style, fault_injection, ring_hash affinity, retries,
// weighted round robin from ORCA, and outlier ejection (the document has none of these; each asserts what the
// gRFC promises). Backends are made slow, hung or failing through `rpc-behavior` metadata (rpc-behavior.ts).
import type { InteropCase } from "../driver.js";
import { circuitBreaking } from "./circuit-breaking.js";
import { faultInjection } from "./fault-injection.js";
import { outlierEjection } from "./outlier-ejection.js";
import { retries } from "./retries.js";
import { ringHashAffinity } from "./ring-hash.js";
import { timeout } from "./timeout.js";
import { weightedRoundRobin } from "./weighted-round-robin.js";

export const POLICY_CASES: readonly InteropCase[] = [
  circuitBreaking,
  timeout,
  faultInjection,
  ringHashAffinity,
  retries,
  weightedRoundRobin,
  outlierEjection,
];
