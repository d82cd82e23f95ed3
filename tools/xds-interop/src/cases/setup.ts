// What several cases set up the same way.
import type { Backend } from "../backend.js";
import type { CaseContext } from "../driver.js";
import { ANY_PATH, backendService, CLIENT_ZONE, type InstanceGroup, serviceListener, urlMap } from "../resources.js";

/** The backend service every case starts with (the URL map's default). */
export const DEFAULT_SERVICE = "backend-service";
/** The second backend service of change_backend_service, traffic_splitting and the matching cases. */
export const ALTERNATE_SERVICE = "alternate-backend-service";

export function names(backends: readonly Backend[]): string[] {
  return backends.map((backend) => backend.name);
}

/** One MIG in the client's zone, at priority 0. */
export function localGroup(subZone: string, backends: readonly Backend[]): InstanceGroup {
  return { backends, zone: CLIENT_ZONE, subZone, priority: 0 };
}

/** Publishes the listener, a URL map sending everything to DEFAULT_SERVICE, and that service's MIGs. */
export async function serveDefaultService(context: CaseContext, groups: readonly InstanceGroup[]): Promise<void> {
  await context.world.publish([
    serviceListener(),
    urlMap([{ match: ANY_PATH, cluster: DEFAULT_SERVICE }]),
    ...backendService(DEFAULT_SERVICE, groups),
  ]);
}

export async function stopAll(backends: readonly Backend[]): Promise<void> {
  await Promise.all(backends.map((backend) => backend.stop()));
}

export async function startAll(backends: readonly Backend[]): Promise<void> {
  await Promise.all(backends.map((backend) => backend.start()));
}
