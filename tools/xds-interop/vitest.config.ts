import { defineProject } from "vitest/config";
import { sharedTestOptions } from "../../vitest.shared.ts";

// A case takes a few seconds in the ci profile (up to about 30 on a machine loaded far beyond its cores); the full
// profile's blocks of 1,000 RPCs at 100 qps take minutes.
const full = process.env.XDSKIT_INTEROP_PROFILE === "full";

export default defineProject({
  test: {
    ...sharedTestOptions,
    include: ["test/**/*.test.ts"],
    testTimeout: full ? 1_800_000 : 120_000,
    // grpc-js-xds 1.14 reads client_side_weighted_round_robin from load_balancing_policy only with the first flag
    // set, and its XdsServer runs the RBAC filter only with the second.
    env: { GRPC_EXPERIMENTAL_XDS_WRR_LB: "true", GRPC_XDS_EXPERIMENTAL_RBAC: "true" },
  },
});
