// The policies this package ships, registered by `createXdsTransport` unless `lbPolicies` replaces the registry.
import type { LbPolicyFactory } from "../balancer/lb-policy.js";
import { createLeastRequestPolicyFactory } from "./least-request-policy.js";
import { createOutlierDetectionPolicyFactory } from "./outlier-detection-policy.js";
import { pickFirstPolicy } from "./pick-first.js";
import { priorityPolicy } from "./priority.js";
import { createRingHashPolicyFactory } from "./ring-hash-policy.js";
import { roundRobinPolicy } from "./round-robin.js";
import { weightedTargetPolicy } from "./weighted-target.js";
import { wrrLocalityPolicy } from "./wrr-locality.js";
import { createWrrPolicyFactory } from "./wrr-policy.js";

export const builtinLbPolicies: readonly LbPolicyFactory[] = Object.freeze([
  roundRobinPolicy,
  pickFirstPolicy,
  weightedTargetPolicy,
  priorityPolicy,
  wrrLocalityPolicy,
  createRingHashPolicyFactory(),
  createLeastRequestPolicyFactory(),
  createWrrPolicyFactory(),
  createOutlierDetectionPolicyFactory(),
] as LbPolicyFactory[]);

export { pickFirstPolicy, priorityPolicy, roundRobinPolicy, weightedTargetPolicy, wrrLocalityPolicy };
