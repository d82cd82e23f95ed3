// @xdskit/dpds-wrapper: re-subscribing 1,000 watches after a DPDS change. The control plane serves 1,000 clusters,
// each in two variants (track=a, track=b). The wrapped client watches all 1,000 with the DPDS parameters track=a;
// the DPDS resource changes to track=b, and every watch moves make-before-break. Beside it, in the same run, the
// plain client does the same job by hand: 1,000 watches with track=a, each cancelled and made again with track=b
// (break-then-make). Measured from the change (the DPDS resource set on the server; the first cancel) to the last
// watcher holding its track=b cluster, and the requests the server received until the client's subscriptions
// settled. One process, client and server on 127.0.0.1, in both protocols.
import { buildCluster, CDS_TYPE_URL, createManagementServer, type RequestEvent } from "@xdskit/control-plane";
import { withDynamicParameters } from "@xdskit/dpds-wrapper";
import { type ClusterUpdate, clusterResourceType, createXdsClient, type XdsClient } from "@xdskit/xds-client";
import { median } from "./lib/measure.js";
import { int, printTable, ratio } from "./lib/table.js";

const WATCHES = 1_000;
const NODE = "bench-node";
const CLUSTER_TYPE = "envoy.config.cluster.v3.Cluster";

interface Result {
  readonly lastResourceMs: number;
  readonly requests: number;
  readonly locators: number;
}

function locatorsIn(event: RequestEvent): number {
  return event.kind === "sotw"
    ? event.request.resourceLocators.length
    : event.request.resourceLocatorsSubscribe.length + event.request.resourceLocatorsUnsubscribe.length;
}

/** Resolves once `done()` holds, checking every millisecond. */
async function until(done: () => boolean, timeoutMs = 60_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!done()) {
    if (performance.now() > deadline) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 1));
  }
}

async function measure(which: "wrapper" | "plain", apiType: "GRPC" | "DELTA_GRPC"): Promise<Result> {
  const server = await createManagementServer({ host: "127.0.0.1", port: 0, historyLimit: 0 });
  let client: XdsClient | undefined;
  try {
    server.setResources(
      Array.from({ length: WATCHES }, (_, i) =>
        (["a", "b"] as const).map((track) => ({
          resource: buildCluster({ name: `c-${i}`, edsServiceName: `${track}-${i}` }),
          constraints: `track=${track}`,
        })),
      ).flat(),
    );
    server.setDynamicParameters(NODE, { [CLUSTER_TYPE]: "track=a" });
    const inner = createXdsClient({
      bootstrap: {
        xds_servers: [{ server_uri: server.address, channel_creds: [{ type: "insecure" }], api_type: apiType }],
        node: { id: NODE },
      },
      env: {},
    });
    client = which === "wrapper" ? withDynamicParameters(inner) : inner;
    const track = new Array<string>(WATCHES).fill("");
    let onB = 0;
    const watch = (i: number, parameters?: Record<string, string>) =>
      client!.watch(
        clusterResourceType,
        `c-${i}`,
        {
          onResourceChanged(result) {
            if (!result.ok) throw new Error(`c-${i}: ${result.error.message}`);
            const update: ClusterUpdate = result.resource;
            const now = update.type === "eds" ? (update.edsServiceName[0] ?? "") : "";
            if (now === "b" && track[i] !== "b") onB += 1;
            track[i] = now;
          },
          onAmbientError: () => {},
        },
        parameters ? { dynamicParameters: parameters } : undefined,
      );
    const cancels = Array.from({ length: WATCHES }, (_, i) => watch(i, which === "plain" ? { track: "a" } : undefined));
    await until(() => track.every((t) => t === "a"));

    let requests = 0;
    let locators = 0;
    let lastRequestAt = performance.now();
    let measuring = false;
    server.hooks.on("request", (event) => {
      lastRequestAt = performance.now();
      if (!measuring) return;
      if (event.typeUrl !== CDS_TYPE_URL && !event.typeUrl.endsWith("DynamicParameterConstraintsMap")) return;
      requests += 1;
      locators += locatorsIn(event);
    });
    // Start once the client has ACKed everything (no request for 300 ms).
    await until(() => performance.now() - lastRequestAt > 300);
    measuring = true;
    const start = performance.now();
    if (which === "wrapper") server.setDynamicParameters(NODE, { [CLUSTER_TYPE]: "track=b" });
    else {
      for (let i = 0; i < WATCHES; i++) {
        cancels[i]!();
        cancels[i] = watch(i, { track: "b" });
      }
    }
    await until(() => onB === WATCHES);
    const lastResourceMs = performance.now() - start;
    // The subscriptions have settled once no request came for 300 ms.
    await until(() => performance.now() - lastRequestAt > 300);
    return { lastResourceMs, requests, locators };
  } finally {
    await client?.close();
    await server.close();
  }
}

const ROUNDS = 5;

/** Runs both alternately, after a warm-up of each; the median of each figure. */
async function compare(apiType: "GRPC" | "DELTA_GRPC"): Promise<Record<"wrapper" | "plain", Result>> {
  await measure("wrapper", apiType);
  await measure("plain", apiType);
  const runs: Record<"wrapper" | "plain", Result[]> = { wrapper: [], plain: [] };
  for (let round = 0; round < ROUNDS; round++) {
    runs.wrapper.push(await measure("wrapper", apiType));
    runs.plain.push(await measure("plain", apiType));
  }
  const summary = (results: Result[]): Result => ({
    lastResourceMs: median(results.map((r) => r.lastResourceMs)),
    requests: median(results.map((r) => r.requests)),
    locators: median(results.map((r) => r.locators)),
  });
  return { wrapper: summary(runs.wrapper), plain: summary(runs.plain) };
}

const rows: string[][] = [];
for (const apiType of ["GRPC", "DELTA_GRPC"] as const) {
  const { wrapper, plain } = await compare(apiType);
  const protocol = apiType === "GRPC" ? "SotW" : "delta";
  rows.push(
    [
      `${protocol}: change to the last new resource (ms)`,
      wrapper.lastResourceMs.toFixed(1),
      plain.lastResourceMs.toFixed(1),
      ratio(wrapper.lastResourceMs / plain.lastResourceMs),
    ],
    [
      `${protocol}: requests the server received`,
      int(wrapper.requests),
      int(plain.requests),
      ratio(wrapper.requests / plain.requests),
    ],
    [
      `${protocol}: resource locators in those requests`,
      int(wrapper.locators),
      int(plain.locators),
      ratio(wrapper.locators / plain.locators),
    ],
  );
}
printTable(
  `${int(WATCHES)} cluster watches moved from track=a to track=b, median of ${ROUNDS} runs each: @xdskit/dpds-wrapper (a DPDS change, make-before-break) vs the plain client re-watching by hand (break-then-make), against @xdskit/control-plane on 127.0.0.1`,
  ["measure", "dpds-wrapper", "plain xds-client", "wrapper / plain"],
  rows,
);
