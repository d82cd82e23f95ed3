// The cases with one MIG of 4 backends: ping_pong, round_robin, backends_restart.
import { allGoTo, evenlySpread, noneSucceed } from "../checks.js";
import type { CaseContext, InteropCase } from "../driver.js";
import { localGroup, names, serveDefaultService, startAll, stopAll } from "./setup.js";

async function fourBackends(context: CaseContext) {
  const backends = await context.world.startGroup("mig", 4);
  await serveDefaultService(context, [localGroup("mig", backends)]);
  context.startClient({ qps: context.profile.qps });
  return backends;
}

export const pingPong: InteropCase = {
  name: "ping_pong",
  failOnFailedRpcs: true,
  async run(context) {
    const backends = await fourBackends(context);
    await context.until("every backend receives RPCs", allGoTo(names(backends)), context.profile.checkRpcs);
  },
};

export const roundRobin: InteropCase = {
  name: "round_robin",
  failOnFailedRpcs: true,
  async run(context) {
    const { profile } = context;
    const backends = await fourBackends(context);
    await context.until("every backend receives RPCs", allGoTo(names(backends)), profile.checkRpcs);
    await context.expectBlock("the next RPCs are spread evenly", evenlySpread(names(backends)), profile.evenRpcs);
  },
};

export const backendsRestart: InteropCase = {
  name: "backends_restart",
  failOnFailedRpcs: false,
  async run(context) {
    const { profile } = context;
    const backends = await fourBackends(context);
    const all = names(backends);
    await context.until("every backend receives RPCs", allGoTo(all), profile.checkRpcs);
    // Round robin over the same 4 backends: the block before and the block after the restart are both the even
    // split, so they are the same distribution (each backend within 1 RPC of a quarter of the block).
    await context.expectBlock("before the restart, RPCs are spread evenly", evenlySpread(all), profile.evenRpcs);

    await stopAll(backends);
    await context.until("with the backends stopped, no RPC succeeds", noneSucceed(), profile.checkRpcs);

    await startAll(backends);
    await context.until("after the restart every backend receives RPCs", allGoTo(all), profile.checkRpcs);
    await context.expectBlock("after the restart, RPCs are spread as before it", evenlySpread(all), profile.evenRpcs);
  },
};
