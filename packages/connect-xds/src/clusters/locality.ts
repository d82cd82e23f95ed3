import type { LocalityName } from "@xdskit/xds-client";

/**
 * The A78 `grpc.lb.locality` value of a locality, as grpc-go writes it: `{region="r", zone="z", sub_zone="s"}`
 * (each value quoted with JSON's escapes). Also the weighted_target child name and the key of LRS handles.
 */
export function localityLabel(name: LocalityName): string {
  return `{region=${JSON.stringify(name.region)}, zone=${JSON.stringify(name.zone)}, sub_zone=${JSON.stringify(name.subZone)}}`;
}
