// The policies this package ships, registered by `createXdsTransport` unless `lbPolicies` replaces the registry.
import type { LbPolicyFactory } from "../lb-policy.js";
import { pickFirstPolicy } from "./pick-first.js";
import { priorityPolicy } from "./priority.js";
import { roundRobinPolicy } from "./round-robin.js";
import { weightedTargetPolicy } from "./weighted-target.js";
import { wrrLocalityPolicy } from "./wrr-locality.js";

export const builtinLbPolicies: readonly LbPolicyFactory[] = Object.freeze([
  roundRobinPolicy,
  pickFirstPolicy,
  weightedTargetPolicy,
  priorityPolicy,
  wrrLocalityPolicy,
] as LbPolicyFactory[]);

export { pickFirstPolicy, priorityPolicy, roundRobinPolicy, weightedTargetPolicy, wrrLocalityPolicy };
