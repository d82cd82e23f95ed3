// The cases that move traffic between backend services through the URL map: change_backend_service and
// traffic_splitting.
import { RDS_TYPE_URL } from "@xdskit/control-plane";
import { allGoTo, weightedSplit } from "../checks.js";
import type { InteropCase } from "../driver.js";
import { ANY_PATH, backendService, urlMap } from "../resources.js";
import { ALTERNATE_SERVICE, DEFAULT_SERVICE, localGroup, names, serveDefaultService } from "./setup.js";

export const changeBackendService: InteropCase = {
  name: "change_backend_service",
  failOnFailedRpcs: true,
  async run(context) {
    const { profile, world } = context;
    const [original, alternate] = await Promise.all([
      world.startGroup("mig-original", 2),
      world.startGroup("mig-alternate", 2),
    ]);
    await serveDefaultService(context, [localGroup("mig-original", original)]);
    // The new backend service exists before the URL map points at it, as the document's driver creates it first.
    await world.publish(backendService(ALTERNATE_SERVICE, [localGroup("mig-alternate", alternate)]));
    context.startClient({ qps: profile.qps });
    await context.until("the original service gets every RPC", allGoTo(names(original)), profile.checkRpcs);

    await world.publish([urlMap([{ match: ANY_PATH, cluster: ALTERNATE_SERVICE }])], [RDS_TYPE_URL]);
    await context.steady("the new service gets every RPC", allGoTo(names(alternate)), profile.checkRpcs);
  },
};

export const trafficSplitting: InteropCase = {
  name: "traffic_splitting",
  failOnFailedRpcs: false,
  async run(context) {
    const { profile, world } = context;
    const [[a], [b]] = await Promise.all([world.startGroup("mig-a", 1), world.startGroup("mig-b", 1)]);
    if (!a || !b) throw new Error("traffic_splitting: backends missing");
    await serveDefaultService(context, [localGroup("mig-a", [a])]);
    context.startClient({ qps: profile.qps });
    await context.until("MIG_a gets RPCs", allGoTo([a.name]), profile.checkRpcs);
    await context.expectBlock("the following RPCs all go to MIG_a", allGoTo([a.name]), profile.splitSteadyRpcs);

    const weights = { [DEFAULT_SERVICE]: 20, [ALTERNATE_SERVICE]: 80 };
    await world.publish(
      [
        ...backendService(ALTERNATE_SERVICE, [localGroup("mig-b", [b])]),
        urlMap([{ match: ANY_PATH, weighted: weights }]),
      ],
      [RDS_TYPE_URL],
    );
    await context.until("both MIGs get RPCs", allGoTo([a.name, b.name], { allowFailures: true }), profile.checkRpcs);
    // Each RPC picks a service at random with these weights, so MIG_a's count in the block is Binomial(n, 0.2):
    // the bounds are the exact ones that a correct client misses with probability profile.alpha.
    await context.expectBlock(
      "the following RPCs split a: 20, b: 80",
      weightedSplit({ [a.name]: 20, [b.name]: 80 }, profile.alpha),
      profile.splitRpcs,
    );
  },
};
