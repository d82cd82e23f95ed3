// Every case of doc/xds-test-descriptions.md that the driver runs, in the document's order, then issue 21's.
import type { InteropCase } from "../driver.js";
import { aggregateClusterDnsFallback } from "./clusters.js";
import {
  removeInstanceGroup,
  secondaryLocalityGetsNoRequestsOnPartialPrimaryFailure,
  secondaryLocalityGetsRequestsOnPrimaryFailure,
} from "./localities.js";
import { headerMatching, pathMatching } from "./matching.js";
import { POLICY_CASES } from "./policies.js";
import { changeBackendService, trafficSplitting } from "./services.js";
import { backendsRestart, pingPong, roundRobin } from "./single-group.js";

/** The cases of doc/xds-test-descriptions.md, in its order (what runs through a relay too). */
export const DOCUMENT_CASES: readonly InteropCase[] = [
  pingPong,
  roundRobin,
  backendsRestart,
  secondaryLocalityGetsRequestsOnPrimaryFailure,
  secondaryLocalityGetsNoRequestsOnPartialPrimaryFailure,
  removeInstanceGroup,
  changeBackendService,
  trafficSplitting,
  pathMatching,
  headerMatching,
];

export const INTEROP_CASES: readonly InteropCase[] = [...DOCUMENT_CASES, ...POLICY_CASES, aggregateClusterDnsFallback];
