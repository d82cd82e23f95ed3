// Load reporting clients shared per xDS client: the transports of one XdsClient report through one LRS client, so
// each LRS server gets one stream from them (as gRPC shares its LRS client per XdsClient).
import { createLrsClient, type LrsClient } from "@xdskit/orca-lrs-bridge";
import type { Logger, XdsClient } from "@xdskit/xds-client";

/** One LRS client per XdsClient, shared by its transports (one LRS stream per server, as gRPC). */
const sharedLrs = new WeakMap<XdsClient, { client: LrsClient; refs: number }>();

/** `logger` undefined: the LRS client logs as the environment says (@xdskit/orca-lrs-bridge). */
export function acquireLrs(client: XdsClient, logger: Logger | undefined): LrsClient {
  let shared = sharedLrs.get(client);
  if (shared === undefined) {
    const node = client.bootstrap.node;
    shared = {
      client: createLrsClient({
        node: {
          id: node.id,
          cluster: node.cluster,
          ...(node.locality === undefined ? {} : { locality: node.locality }),
          ...(node.metadata === undefined ? {} : { metadata: node.metadata }),
          userAgentName: node.userAgentName,
          userAgentVersion: node.userAgentVersion,
        },
        orcaLrsPropagation: client.features.orcaLrsPropagation,
        ...(logger === undefined ? {} : { logger }),
      }),
      refs: 0,
    };
    sharedLrs.set(client, shared);
  }
  shared.refs++;
  return shared.client;
}

export async function releaseLrs(client: XdsClient): Promise<void> {
  const shared = sharedLrs.get(client);
  if (shared === undefined || --shared.refs > 0) return;
  sharedLrs.delete(client);
  await shared.client.close();
}
