// The CPU time an @xdskit/xds-client spends on one response (probes/client-cpu.ts, check/run-check.ts): one process
// holds the client and a raw ADS server (grpc-js, writing pre-encoded responses: the same small cost in every case).
// Each case sends `rounds` responses, waits for the callbacks each one causes, and reports the median CPU time (user +
// system, every thread of the process: GC included) and wall time from the write to the last callback.
import { writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { join } from "node:path";
import { create, toBinary } from "@bufbuild/protobuf";
import { anyPack } from "@bufbuild/protobuf/wkt";
import { buildCluster, buildClusterLoadAssignment } from "@xdskit/control-plane";
import { ClusterSchema } from "@xdskit/protos/envoy/config/cluster/v3/cluster_pb";
import { ClusterLoadAssignmentSchema } from "@xdskit/protos/envoy/config/endpoint/v3/endpoint_pb";
import {
  type DeltaDiscoveryRequest,
  DeltaDiscoveryResponseSchema,
  type DiscoveryRequest,
  DiscoveryResponseSchema,
} from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";
import { clusterResourceType, createXdsClient, endpointResourceType, type ResourceType } from "@xdskit/xds-client";
import { median } from "./measure.js";
import { type RawServerCall, serveRawAds } from "./raw-ads.js";

const CDS = "type.googleapis.com/envoy.config.cluster.v3.Cluster";
const EDS = "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment";

/** The cases: SotW, delta and EDS (see probes/client-cpu.ts). */
export const CLIENT_CASES = [
  "sotw-full",
  "sotw-one",
  "sotw-reordered",
  "delta-full",
  "delta-one",
  "eds-watched",
  "eds-big",
] as const;
export type ClientCase = (typeof CLIENT_CASES)[number];

export interface ClientCaseOptions {
  readonly rounds: number;
  /** Resources (endpoints for eds-big). */
  readonly count: number;
  /** Where to write a CPU profile of the measured rounds (`<case>.cpuprofile`). */
  readonly profileDir?: string;
}

export interface ClientCaseResult {
  /** Medians over the rounds, ms. */
  readonly cpu: number;
  readonly wall: number;
  readonly cpus: readonly number[];
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
const cpuMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};

function address(i: number): string {
  return `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}:8080`;
}

/** The resources of round `round`: `changed(i)` says which get new content. */
function resources(kind: "cds" | "eds" | "eds-big", round: number, changed: (i: number) => boolean, n: number) {
  const tag = (i: number) => (changed(i) ? round : 0);
  if (kind === "cds") {
    return Array.from({ length: n }, (_, i) =>
      anyPack(ClusterSchema, buildCluster({ name: `cluster-${i}`, edsServiceName: `eds-${i}-r${tag(i)}` })),
    );
  }
  if (kind === "eds") {
    return Array.from({ length: n }, (_, i) =>
      anyPack(
        ClusterLoadAssignmentSchema,
        buildClusterLoadAssignment({
          clusterName: `cluster-${i}`,
          localities: [{ region: "r", zone: `z${tag(i) % 3}`, endpoints: [address(i * 4 + (tag(i) % 2))] }],
        }),
      ),
    );
  }
  return [
    anyPack(
      ClusterLoadAssignmentSchema,
      buildClusterLoadAssignment({
        clusterName: "big",
        localities: [
          { region: "r", zone: "z", endpoints: Array.from({ length: n }, (_, i) => address(i + (round % 2))) },
        ],
      }),
    ),
  ];
}

interface Case {
  readonly api: "sotw" | "delta";
  readonly kind: "cds" | "eds" | "eds-big";
  /** Names watched, and the one whose callback ends a round. */
  readonly watched: number;
  readonly last: number;
  /** The response of round r (r >= 1; round 0 is the first fill). */
  response(round: number): Uint8Array;
}

function caseOf(name: ClientCase, count: number): Case {
  const sotw =
    (kind: Case["kind"], n: number, changed: (i: number) => boolean, reverse = false) =>
    (round: number) => {
      const list = resources(kind, round, round === 0 ? () => false : changed, n);
      if (reverse && round % 2 === 1) list.reverse();
      const version = String(round);
      return toBinary(
        DiscoveryResponseSchema,
        create(DiscoveryResponseSchema, {
          versionInfo: version,
          typeUrl: list[0]!.typeUrl,
          nonce: version,
          resources: list,
        }),
      );
    };
  const delta = (n: number, only?: number) => (round: number) => {
    const list = resources("cds", round, () => true, n);
    const version = String(round);
    const picked =
      round === 0 || only === undefined ? list.map((any, i) => [any, i] as const) : [[list[only]!, only] as const];
    return toBinary(
      DeltaDiscoveryResponseSchema,
      create(DeltaDiscoveryResponseSchema, {
        systemVersionInfo: version,
        typeUrl: CDS,
        nonce: version,
        resources: picked.map(([any, i]) => ({ name: `cluster-${i}`, version, resource: any })),
      }),
    );
  };
  const middle = count >> 1;
  switch (name) {
    case "sotw-full":
      return { api: "sotw", kind: "cds", watched: count, last: count - 1, response: sotw("cds", count, () => true) };
    case "sotw-one":
      return {
        api: "sotw",
        kind: "cds",
        watched: count,
        last: middle,
        response: sotw("cds", count, (i) => i === middle),
      };
    case "sotw-reordered":
      return {
        api: "sotw",
        kind: "cds",
        watched: count,
        last: middle,
        response: sotw("cds", count, (i) => i === middle, true),
      };
    case "delta-full":
      return { api: "delta", kind: "cds", watched: count, last: count - 1, response: delta(count) };
    case "delta-one":
      return { api: "delta", kind: "cds", watched: count, last: middle, response: delta(count, middle) };
    case "eds-watched":
      return { api: "sotw", kind: "eds", watched: count, last: count - 1, response: sotw("eds", count, () => true) };
    case "eds-big":
      return { api: "sotw", kind: "eds-big", watched: 1, last: 0, response: sotw("eds-big", count, () => true) };
    default:
      throw new Error(`unknown case ${name}`);
  }
}

/** Measures one case in this process. */
export async function measureClientCase(name: ClientCase, options: ClientCaseOptions): Promise<ClientCaseResult> {
  const { rounds, profileDir } = options;
  const c = caseOf(name, options.count);
  const responses = Array.from({ length: rounds + 1 }, (_, r) => c.response(r));
  let call: RawServerCall | undefined;
  let subscribed = false;
  const typeUrl = c.kind === "cds" ? CDS : EDS;
  const server = await serveRawAds(c.api, (raw) => {
    call = raw;
    raw.on("data", (request: DiscoveryRequest | DeltaDiscoveryRequest) => {
      if (request.typeUrl !== typeUrl || subscribed) return;
      const names = "resourceNames" in request ? request.resourceNames : request.resourceNamesSubscribe;
      if (names.length < c.watched) return;
      subscribed = true;
      raw.write(Buffer.from(responses[0]!));
    });
  });
  const client = createXdsClient({
    bootstrap: {
      xds_servers: [
        {
          server_uri: server.address,
          channel_creds: [{ type: "insecure" }],
          ...(c.api === "delta" ? { api_type: "DELTA_GRPC" as const } : {}),
        },
      ],
      node: { id: "probe" },
    },
    env: {},
  });
  const type = (c.kind === "cds" ? clusterResourceType : endpointResourceType) as ResourceType<unknown>;
  const prefix = c.kind === "eds-big" ? "big" : "cluster";
  let seen = 0;
  let fill: () => void = () => {};
  const filled = new Promise<void>((resolve) => {
    fill = resolve;
  });
  let onLast: (() => void) | undefined;
  for (let i = 0; i < c.watched; i++) {
    const first = { done: false };
    client.watch(type, c.kind === "eds-big" ? prefix : `${prefix}-${i}`, {
      onResourceChanged: (result) => {
        if (!result.ok) throw result.error;
        if (!first.done) {
          first.done = true;
          if (++seen === c.watched) fill();
        } else if (i === c.last) onLast?.();
      },
      onAmbientError: () => {},
    });
  }
  await filled;
  const session = profileDir === undefined ? undefined : new Session();
  if (session) {
    session.connect();
    await session.post("Profiler.enable");
    await session.post("Profiler.setSamplingInterval", { interval: 100 });
    await session.post("Profiler.start");
  }
  const cpus: number[] = [];
  const walls: number[] = [];
  for (let r = 1; r <= rounds; r++) {
    await pause(100);
    const done = new Promise<void>((resolve) => {
      onLast = resolve;
    });
    const cpu0 = cpuMs();
    const t0 = performance.now();
    call!.write(Buffer.from(responses[r]!));
    await done;
    walls.push(performance.now() - t0);
    cpus.push(cpuMs() - cpu0);
  }
  if (session) {
    const { profile } = await session.post("Profiler.stop");
    writeFileSync(join(profileDir!, `${name}.cpuprofile`), JSON.stringify(profile));
    session.disconnect();
  }
  await client.close();
  await server.close();
  return { cpu: median(cpus), wall: median(walls), cpus };
}
