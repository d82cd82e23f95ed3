// The cases about localities of one backend service: secondary_locality_gets_requests_on_primary_failure,
// secondary_locality_gets_no_requests_on_partial_primary_failure, remove_instance_group.
import { EDS_TYPE_URL } from "@xdskit/control-plane";
import type { Backend } from "../backend.js";
import { allGoTo } from "../checks.js";
import type { CaseContext, InteropCase } from "../driver.js";
import { backendService, OTHER_ZONE } from "../resources.js";
import { DEFAULT_SERVICE, localGroup, names, serveDefaultService, startAll, stopAll } from "./setup.js";

/** A primary MIG of 2 in the client's zone (priority 0) and a secondary MIG of 2 in another zone (priority 1). */
async function primaryAndSecondary(context: CaseContext) {
  const [primary, secondary] = await Promise.all([
    context.world.startGroup("primary", 2),
    context.world.startGroup("secondary", 2),
  ]);
  await serveDefaultService(context, [
    localGroup("primary", primary),
    { backends: secondary, zone: OTHER_ZONE, subZone: "secondary", priority: 1 },
  ]);
  context.startClient({ qps: context.profile.qps });
  await context.until("the primary locality gets every RPC", allGoTo(names(primary)), context.profile.checkRpcs);
  return { primary, secondary };
}

/** Counted at the backends: RPCs the secondary locality answered since the case began. */
function answeredBy(backends: readonly Backend[]): number {
  return backends.reduce((sum, backend) => sum + backend.calls, 0);
}

export const secondaryLocalityGetsRequestsOnPrimaryFailure: InteropCase = {
  name: "secondary_locality_gets_requests_on_primary_failure",
  failOnFailedRpcs: false,
  async run(context) {
    const { profile } = context;
    const { primary, secondary } = await primaryAndSecondary(context);
    context.check(
      answeredBy(secondary) === 0,
      () => `the secondary locality answered ${answeredBy(secondary)} RPCs while the primary was up`,
    );

    await stopAll(primary);
    await context.steady(
      "with the primary stopped, the secondary locality gets every RPC",
      allGoTo(names(secondary), { allowFailures: true }),
      profile.checkRpcs,
    );

    await startAll(primary);
    await context.steady(
      "with the primary back, it gets every RPC again and the secondary none",
      allGoTo(names(primary), { allowFailures: true }),
      profile.checkRpcs,
    );
  },
};

export const secondaryLocalityGetsNoRequestsOnPartialPrimaryFailure: InteropCase = {
  name: "secondary_locality_gets_no_requests_on_partial_primary_failure",
  failOnFailedRpcs: false,
  async run(context) {
    const { profile } = context;
    const { primary, secondary } = await primaryAndSecondary(context);
    const [stopped, remaining] = primary as [Backend, Backend];

    await stopped.stop();
    // run_xds_tests.py: every RPC goes to the primary backends still running.
    await context.steady(
      `with ${stopped.name} stopped, ${remaining.name} gets every RPC`,
      allGoTo([remaining.name], { allowFailures: true }),
      profile.checkRpcs,
    );
    // Not one RPC went to the secondary locality at any point: the client never failed over.
    context.check(
      answeredBy(secondary) === 0,
      () => `the secondary locality answered ${answeredBy(secondary)} RPCs though a primary backend stayed up`,
    );
  },
};

export const removeInstanceGroup: InteropCase = {
  name: "remove_instance_group",
  failOnFailedRpcs: false,
  async run(context) {
    const { profile, world } = context;
    const [groupA, groupB] = await Promise.all([world.startGroup("mig-a", 2), world.startGroup("mig-b", 2)]);
    await serveDefaultService(context, [localGroup("mig-a", groupA), localGroup("mig-b", groupB)]);
    const load = context.startClient({ qps: profile.qps });
    await context.until(
      "every backend of both MIGs receives RPCs",
      allGoTo(names([...groupA, ...groupB])),
      profile.checkRpcs,
    );

    const failed = () => {
      const codes = load.accumulated().result.UnaryCall ?? {};
      return Object.entries(codes).reduce((sum, [code, count]) => (code === "0" ? sum : sum + count), 0);
    };
    const failedBefore = failed();
    await world.publish(backendService(DEFAULT_SERVICE, [localGroup("mig-b", groupB)]), [EDS_TYPE_URL]);
    await context.steady("the remaining MIG gets every RPC", allGoTo(names(groupB)), profile.checkRpcs);
    // "(no RPC failures)": none failed from the removal on, not just in the blocks sampled (the last ones included).
    await load.stop();
    context.check(failed() === failedBefore, () => `${failed() - failedBefore} RPCs failed after the MIG was removed`);
  },
};
