// ring_hash_affinity, in the style of doc/xds-test-descriptions.md (which has no such case): a header hash policy
// keeps each session's RPCs on one backend (gRFC A42).
import { create } from "@bufbuild/protobuf";
import { Cluster_LbPolicy, Cluster_RingHashLbConfigSchema } from "@xdskit/protos/envoy/config/cluster/v3/cluster_pb";
import { RouteAction_HashPolicySchema } from "@xdskit/protos/envoy/config/route/v3/route_components_pb";
import type { Backend } from "../backend.js";
import { type BlockCheck, methodsGoTo } from "../checks.js";
import type { InteropCase } from "../driver.js";
import { ANY_PATH, backendService, serviceListener, urlMap } from "../resources.js";
import { DEFAULT_SERVICE, localGroup } from "./setup.js";

export const ringHashAffinity: InteropCase = {
  name: "ring_hash_affinity",
  failOnFailedRpcs: true,
  async run(context) {
    const backends = await context.world.startGroup("mig", 4);
    const publish = (group: readonly Backend[]) =>
      context.world.publish([
        serviceListener(),
        urlMap([
          {
            match: ANY_PATH,
            cluster: DEFAULT_SERVICE,
            editAction: (a) => {
              a.hashPolicy = [
                create(RouteAction_HashPolicySchema, {
                  policySpecifier: { case: "header", value: { headerName: "x-session" } },
                }),
              ];
            },
          },
        ]),
        ...backendService(DEFAULT_SERVICE, [localGroup("mig", group)], (cluster) => {
          cluster.lbPolicy = Cluster_LbPolicy.RING_HASH;
          // One ring entry per backend: removing one changes nothing on the ring but its own entry.
          cluster.lbConfig = {
            case: "ringHashLbConfig",
            value: create(Cluster_RingHashLbConfigSchema, { minimumRingSize: 1n }),
          };
        }),
      ]);
    await publish(backends);
    // Two sessions: UnaryCalls carry one header value, EmptyCalls another, chosen so that the two land on
    // different backends (a client that sent everything to one backend could never pass).
    const sessionOf = (n: number) => (n === 0 ? "session-two" : `session-two-${n}`);
    const load = context.startClient({
      qps: context.profile.qps,
      types: ["UnaryCall", "EmptyCall"],
      metadata: { UnaryCall: [["x-session", "session-one"]], EmptyCall: [["x-session", sessionOf(0)]] },
    });
    const owners = (stats: Parameters<BlockCheck>[0]) =>
      (["UnaryCall", "EmptyCall"] as const).map((m) => Object.keys(stats.rpcsByMethod[m] ?? {}));
    const eachOnOne: BlockCheck = (stats) => {
      if (!stats.complete || stats.numFailures > 0) return `${stats.numFailures} failures`;
      const [u, e] = owners(stats);
      return u?.length === 1 && e?.length === 1 ? undefined : `sessions spread: ${JSON.stringify(stats.rpcsByMethod)}`;
    };
    let first = await context.steady(
      "each session's RPCs all reach one backend",
      eachOnOne,
      context.profile.policyRpcs,
    );
    // With four backends, another value has a one-in-four chance of the first session's backend: twenty tries leave
    // a correct client a chance of 1 in 10^12 of failing here. Each try only needs to see where the value lands (a
    // small block); the value found is then held to the steady check with full blocks.
    const PROBE_RPCS = 20;
    let searched = false;
    for (let n = 1; owners(first)[0]?.[0] === owners(first)[1]?.[0]; n++) {
      if (n > 20)
        throw new Error(`every EmptyCall session value reached ${owners(first)[0]?.[0]}, the UnaryCall one's backend`);
      load.configure({
        types: ["UnaryCall", "EmptyCall"],
        metadata: { UnaryCall: [["x-session", "session-one"]], EmptyCall: [["x-session", sessionOf(n)]] },
        timeoutMs: context.profile.rpcTimeoutMs,
      });
      first = await context.until(
        `with EmptyCall session ${sessionOf(n)}, each session's RPCs all reach one backend`,
        eachOnOne,
        PROBE_RPCS,
      );
      searched = true;
    }
    if (searched) {
      first = await context.steady("the two sessions, each on its own backend", eachOnOne, context.profile.policyRpcs);
      if (owners(first)[0]?.[0] === owners(first)[1]?.[0]) throw new Error("the sessions met on one backend again");
    }
    const [[unaryOwner], [emptyOwner]] = owners(first) as [string[], string[]];
    // Remove a backend that owns neither session: both stay where they are.
    const bystander = backends.find((b) => b.name !== unaryOwner && b.name !== emptyOwner) as Backend;
    const rest = backends.filter((b) => b !== bystander);
    await publish(rest);
    await context.steady(
      `after ${bystander.name} is removed, each session stays on its backend`,
      methodsGoTo({ UnaryCall: [unaryOwner as string], EmptyCall: [emptyOwner as string] }),
      context.profile.policyRpcs,
    );
    // Remove the backend of the UnaryCall session: it moves to one other backend; the other session stays.
    await publish(rest.filter((b) => b.name !== unaryOwner));
    await context.steady(
      `after ${unaryOwner} is removed, its session moves to one backend and the other session stays`,
      (stats) => {
        if (!stats.complete || stats.numFailures > 0) return `${stats.numFailures} failures`;
        const [u, e] = owners(stats);
        if (u?.length !== 1 || u[0] === unaryOwner) return `UnaryCall session on ${JSON.stringify(u)}`;
        if (e?.length !== 1 || e[0] !== emptyOwner) return `EmptyCall session moved: ${JSON.stringify(e)}`;
        return undefined;
      },
      context.profile.policyRpcs,
    );
  },
};
