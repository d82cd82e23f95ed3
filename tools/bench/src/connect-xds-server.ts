// @xdskit/connect-xds-server against a plain connectNodeAdapter server, over real HTTP/2 on 127.0.0.1, in one run.
// Every server runs in a child process of its own (workers/xds-server-worker.ts), so the CPU figures are the
// server's alone; the client (connect-node's gRPC transport) and the control plane run here. Cases (`--only <case>`):
//  - calls: unary calls at concurrency 1 and 50 to a plain server and to an xDS-enabled one, cleartext and mTLS (the
//    xDS server's TLS from a DownstreamTlsContext naming a file_watcher instance over the same files as the plain
//    server's): p50 latency and the server's CPU per call, rounds alternating, medians compared. Goal <= 1.1x.
//  - rbac: the same calls to xDS-enabled servers whose chain runs the RBAC filter with 100 policies, against one
//    without the filter: the server's CPU per call and the difference, in µs.
//  - decide: what the server runs per call before the service (its route table: virtual host, route, HTTP filters),
//    in this process, with RBAC's 100 policies and without: ns per call and the difference. Goals: RBAC <= 1 µs per
//    call, and nothing when the call has none of the headers the policies read.
// `--quick` makes fewer rounds and shorter samples. Not a test: it prints figures and ratios, and gates nothing.
import { type ChildProcess, fork } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import type { IncomingHttpHeaders } from "node:http2";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { create } from "@bufbuild/protobuf";
import { StringValueSchema } from "@bufbuild/protobuf/wkt";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { compileRouteTable, defaultServerFilters } from "@xdskit/connect-xds-server/internal";
import {
  buildRbacFilter,
  buildServerListener,
  buildServerRouteConfiguration,
  createManagementServer,
  type RbacRulesInit,
} from "@xdskit/control-plane";
import { createTestCa, issueLocalhost, writeCertificate } from "@xdskit/test-pki";
import type { RbacFilterConfig, RbacRule, ServerHttpFilter, VirtualHost } from "@xdskit/xds-client";
import { EchoService } from "./lib/echo-service.js";
import { consume, median, opsPerSecond } from "./lib/measure.js";
import { printTable, ratio } from "./lib/table.js";

const quick = process.argv.includes("--quick");
const onlyAt = process.argv.indexOf("--only");
/** `--only calls|rbac|decide` runs one case. */
const runs = (name: string) => onlyAt < 0 || process.argv[onlyAt + 1] === name;
const ROUNDS = quick ? 3 : 7;
const POLICIES = 100;
const worker = join(dirname(fileURLToPath(import.meta.url)), "workers", "xds-server-worker.js");

// --- servers in child processes -------------------------------------------------------------------------------

type Security = "cleartext" | "mtls";
interface ServerProcess {
  readonly port: number;
  /** The Listener it watches (xds kind). */
  readonly name: string;
  readonly child: ChildProcess;
  /** Its CPU time so far, µs. */
  cpuUs(): Promise<number>;
  /** Resolves once the xDS server first serves. */
  readonly serving: Promise<void>;
}

function startServer(kind: "plain" | "xds", security: Security, config: object): Promise<ServerProcess> {
  const child = fork(worker, [kind, security, JSON.stringify(config)], { stdio: "inherit" });
  // The worker's messages, each taken by the first waiter whose key it has.
  type Waiter = { key: string; resolve: (message: Record<string, unknown>) => void; reject: (e: Error) => void };
  const waiters: Waiter[] = [];
  child.on("message", (message: Record<string, unknown>) => {
    const at = waiters.findIndex((w) => w.key in message);
    if (at >= 0) waiters.splice(at, 1)[0]?.resolve(message);
  });
  child.once("exit", (code) => {
    for (const w of waiters.splice(0)) w.reject(new Error(`the ${kind} ${security} server exited (${code})`));
  });
  const next = (key: string, request?: string) =>
    new Promise<Record<string, unknown>>((resolve, reject) => {
      waiters.push({ key, resolve, reject });
      if (request !== undefined) child.send(request);
    });
  const serving = next("serving").then(() => undefined);
  serving.catch(() => {});
  return next("port").then((bound) => ({
    port: bound.port as number,
    name: bound.name as string,
    child,
    serving,
    cpuUs: () => next("cpuUs", "cpu").then((m) => m.cpuUs as number),
  }));
}

// --- the set-up: certificates in files, a control plane, the servers ----------------------------------------------

const dir = mkdtempSync(join(tmpdir(), "bench-xds-server-"));
const ca = createTestCa();
const caFile = join(dir, "ca.pem");
writeCertificate(dir, "ca", ca);
const serverFiles = writeCertificate(dir, "server", issueLocalhost(ca));
const clientCert = ca.issue({ commonName: "bench-client", uris: ["spiffe://bench/ns/a/sa/client"] });
const files = { certFile: serverFiles.certFile, keyFile: serverFiles.keyFile, caFile };
const controlPlane = await createManagementServer({});

/** 100 DENY policies, each on a header of its own (`x-deny-<i>: yes`); the bench's calls carry none of them. */
const denyHeaders: RbacRulesInit = {
  action: "DENY",
  policies: Object.fromEntries(
    Array.from({ length: POLICIES }, (_, i) => [
      `deny-${i}`,
      {
        permissions: [
          {
            rule: {
              case: "header",
              value: {
                name: `x-deny-${i}`,
                headerMatchSpecifier: { case: "stringMatch", value: { matchPattern: { case: "exact", value: "yes" } } },
              },
            },
          },
        ],
        principals: [{ identifier: { case: "any", value: true } }],
      },
    ]),
  ),
};
/** 100 ALLOW policies on a method each (`url_path` exact), the last being the bench's; any principal. */
const allowMethods: RbacRulesInit = {
  action: "ALLOW",
  policies: Object.fromEntries(
    Array.from({ length: POLICIES }, (_, i) => [
      `method-${i}`,
      {
        permissions: [
          {
            rule: {
              case: "urlPath",
              value: {
                rule: {
                  case: "path",
                  value: {
                    matchPattern: {
                      case: "exact",
                      value: i === POLICIES - 1 ? "/xdskit.bench.Echo/Unary" : `/pkg.Svc/Method${i}`,
                    },
                  },
                },
              },
            },
          },
        ],
        principals: [{ identifier: { case: "any", value: true } }],
      },
    ]),
  ),
};

/** Starts an xDS-enabled server and gives it its Listener (TLS from the "pki" instance for mtls). */
async function startXds(security: Security, rbac?: RbacRulesInit): Promise<ServerProcess> {
  const server = await startServer("xds", security, { controlPlane: controlPlane.address, ...files });
  controlPlane.setResource(
    buildServerListener({
      name: server.name,
      address: { host: "127.0.0.1", port: server.port },
      filterChains: [
        {
          routeConfig: buildServerRouteConfiguration({ name: "bench-routes" }),
          ...(rbac === undefined ? {} : { httpFilters: [buildRbacFilter(rbac)] }),
          ...(security === "mtls" ? { tls: { identity: "pki", roots: "pki" } } : {}),
        },
      ],
    }),
  );
  await server.serving;
  return server;
}

// --- calls ----------------------------------------------------------------------------------------------------

type Call = () => Promise<unknown>;
type Echo = { unary(r: object, options?: { headers?: Record<string, string> }): Promise<{ value: string }> };
const request = create(StringValueSchema, { value: "x" });

function callTo(server: ServerProcess, security: Security): { call: Call; check: Promise<unknown> } {
  const transport = createGrpcTransport(
    security === "cleartext"
      ? { baseUrl: `http://127.0.0.1:${server.port}` }
      : {
          baseUrl: `https://127.0.0.1:${server.port}`,
          nodeOptions: { ca: ca.cert, cert: clientCert.cert, key: clientCert.key },
        },
  );
  const client = createClient(EchoService, transport) as unknown as Echo;
  const call = () => client.unary(request);
  return { call, check: call() };
}

/** `total` calls with `concurrency` in flight: the p50 latency (ms) and the server's CPU per call (µs). */
async function run(call: Call, server: ServerProcess, total: number, concurrency: number) {
  const latencies = new Float64Array(total);
  let next = 0;
  const before = await server.cpuUs();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let i = next++; i < total; i = next++) {
        const t = performance.now();
        await call();
        latencies[i] = performance.now() - t;
      }
    }),
  );
  const serverUs = (await server.cpuUs()) - before;
  latencies.sort();
  return { p50: latencies[Math.floor(total / 2)]!, serverCpuUs: serverUs / total };
}

/** Rounds alternating between the servers; per concurrency, the median p50 and server CPU per call of each. */
async function compare(calls: { call: Call; server: ServerProcess }[], concurrency: number, total: number) {
  for (const { call, server } of calls) await run(call, server, 2_000, concurrency); // warm-up
  const p50 = calls.map(() => [] as number[]);
  const cpu = calls.map(() => [] as number[]);
  for (let round = 0; round < ROUNDS; round++) {
    for (const [i, { call, server }] of calls.entries()) {
      const r = await run(call, server, total, concurrency);
      p50[i]!.push(r.p50);
      cpu[i]!.push(r.serverCpuUs);
    }
  }
  return calls.map((_, i) => ({ p50: median(p50[i]!), cpu: median(cpu[i]!) }));
}

const started: ServerProcess[] = [];
const track = (server: ServerProcess) => {
  started.push(server);
  return server;
};

if (runs("calls")) {
  const rows: string[][] = [];
  for (const security of ["cleartext", "mtls"] as const) {
    const plain = track(await startServer("plain", security, files));
    const xds = track(await startXds(security));
    const calls = [
      { ...callTo(xds, security), server: xds },
      { ...callTo(plain, security), server: plain },
    ];
    await Promise.all(calls.map((c) => c.check));
    for (const concurrency of [1, 50]) {
      const [ours, base] = await compare(calls, concurrency, concurrency === 1 ? 1_000 : 5_000);
      rows.push([
        `${security}, concurrency ${concurrency}`,
        `${ours!.p50.toFixed(3)} ms`,
        `${base!.p50.toFixed(3)} ms`,
        ratio(ours!.p50 / base!.p50),
        `${ours!.cpu.toFixed(1)} us`,
        `${base!.cpu.toFixed(1)} us`,
        ratio(ours!.cpu / base!.cpu),
      ]);
    }
  }
  printTable(
    `Unary calls (connect-node gRPC client): createXdsServer against a plain connectNodeAdapter server, each in a process of its own (median of ${ROUNDS} rounds; goal: p50 and server CPU/call <= 1.1x)`,
    ["", "p50 xds", "p50 plain", "p50 ratio", "server CPU/call xds", "plain", "CPU ratio"],
    rows,
  );
}

if (runs("rbac")) {
  const servers = [
    { label: "no RBAC filter", server: track(await startXds("cleartext")) },
    {
      label: `${POLICIES} header DENY policies, none of their headers sent`,
      server: track(await startXds("cleartext", denyHeaders)),
    },
    {
      label: `${POLICIES} method ALLOW policies, the call's method the last`,
      server: track(await startXds("cleartext", allowMethods)),
    },
  ];
  const calls = servers.map(({ server }) => ({ ...callTo(server, "cleartext"), server }));
  await Promise.all(calls.map((c) => c.check));
  const rows: string[][] = [];
  for (const concurrency of [1, 50]) {
    const results = await compare(calls, concurrency, concurrency === 1 ? 1_000 : 5_000);
    for (const [i, { label }] of servers.entries()) {
      const r = results[i]!;
      const base = results[0]!;
      rows.push([
        `${label}, concurrency ${concurrency}`,
        `${r.p50.toFixed(3)} ms`,
        `${r.cpu.toFixed(1)} us`,
        i === 0 ? "" : `${(r.cpu - base.cpu).toFixed(1)} us`,
        ratio(r.cpu / base.cpu),
      ]);
    }
  }
  printTable(
    `RBAC in xDS-enabled servers, cleartext unary calls (median of ${ROUNDS} rounds; the in-process 'decide' case measures the same difference without the noise)`,
    ["server", "p50", "server CPU/call", "difference", "CPU ratio"],
    rows,
  );
}

// --- decide: the per-call checks, in process ----------------------------------------------------------------------

if (runs("decide")) {
  const anyRule: RbacRule = { type: "any" };
  const headerDeny: RbacFilterConfig = {
    rules: {
      action: "DENY",
      policies: Array.from({ length: POLICIES }, (_, i) => ({
        name: `deny-${i}`,
        permissions: [
          {
            type: "header",
            header: { name: `x-deny-${i}`, invert: false, type: "exact", value: "yes", ignoreCase: false },
          },
        ],
        principals: [anyRule],
      })),
    },
  };
  const methodAllow: RbacFilterConfig = {
    rules: {
      action: "ALLOW",
      policies: Array.from({ length: POLICIES }, (_, i) => ({
        name: `method-${i}`,
        permissions: [{ type: "url_path", path: { type: "exact", value: `/pkg.Svc/Method${i}`, ignoreCase: false } }],
        principals: [
          { type: "authenticated", principalName: { type: "prefix", value: "spiffe://mesh/ns/a/", ignoreCase: false } },
        ],
      })),
    },
  };
  const suffixAllow: RbacFilterConfig = {
    rules: {
      action: "ALLOW",
      policies: Array.from({ length: POLICIES }, (_, i) => ({
        name: `suffix-${i}`,
        permissions: [{ type: "url_path", path: { type: "suffix", value: `/Method${i}`, ignoreCase: false } }],
        principals: [{ type: "source_ip", range: { family: 4, address: `10.${i}.0.0`, prefixLen: 16 } }],
      })),
    },
  };
  const config = { type: "bytes", kind: "bytes", value: new Uint8Array() } as const;
  const router: ServerHttpFilter = {
    name: "router",
    config,
    isOptional: false,
    disabled: false,
    filter: { type: "router" },
  };
  const rbac = (rules: RbacFilterConfig): ServerHttpFilter => ({
    name: "envoy.filters.http.rbac",
    config,
    isOptional: false,
    disabled: false,
    filter: { type: "rbac", ...rules },
  });
  const virtualHosts: VirtualHost[] = [
    {
      name: "bench",
      domains: ["*"],
      typedPerFilterConfig: {},
      routes: [
        {
          name: "all",
          match: { path: { type: "prefix", value: "", caseSensitive: true }, headers: [] },
          action: { type: "non_forwarding" },
          typedPerFilterConfig: {},
        },
      ],
    },
  ] as unknown as VirtualHost[];
  const table = (filters: ServerHttpFilter[]) =>
    compileRouteTable({
      routes: { virtualHosts },
      httpFilters: filters,
      registry: defaultServerFilters,
      nodeId: "bench",
      random: Math.random,
    });
  // What node:http2 gives the handler of a connect-node gRPC call.
  const headers: IncomingHttpHeaders = {
    ":method": "POST",
    ":scheme": "http",
    ":authority": "127.0.0.1:50051",
    ":path": "/pkg.Svc/Get",
    "content-type": "application/grpc+proto",
    te: "trailers",
    "user-agent": "connect-es/2.1.2",
    "grpc-timeout": "4999m",
  };
  const callView = (path: string, extra: IncomingHttpHeaders = {}, principal?: string, ip = "10.0.0.7") => ({
    path,
    headers: { ...headers, ":path": path, ...extra },
    peer: { ip, port: 40000, principalNames: principal === undefined ? undefined : [principal] },
    local: { ip: "10.1.0.1", port: 50051 },
  });
  const last = POLICIES - 1;
  const scenarios = [
    {
      name: "1 header DENY policy (not 100), the call lacks its header",
      rules: { rules: { action: "DENY", policies: headerDeny.rules!.policies.slice(0, 1) } } as RbacFilterConfig,
      call: callView("/pkg.Svc/Get"),
    },
    { name: "header DENY, the call has none of their headers", rules: headerDeny, call: callView("/pkg.Svc/Get") },
    {
      name: "header DENY, the call has the last's header, another value",
      rules: headerDeny,
      call: callView("/pkg.Svc/Get", { [`x-deny-${last}`]: "no" }),
    },
    {
      name: "header DENY, the call matches the last (denied)",
      rules: headerDeny,
      call: callView("/pkg.Svc/Get", { [`x-deny-${last}`]: "yes" }),
    },
    {
      name: "method ALLOW (mTLS principal), the call's method the last",
      rules: methodAllow,
      call: callView(`/pkg.Svc/Method${last}`, {}, "spiffe://mesh/ns/a/sa/client"),
    },
    {
      name: "path-suffix + source range ALLOW (no index), the last matches",
      rules: suffixAllow,
      call: callView(`/pkg.Svc/Method${last}`, {}, undefined, `10.${last}.3.4`),
    },
  ];
  const options = quick ? { sampleMs: 50, samples: 3 } : { sampleMs: 200, samples: 7 };
  const rows: string[][] = [];
  for (const scenario of scenarios) {
    const without = table([router]);
    const withRbac = table([rbac(scenario.rules), router]);
    const authority = headers[":authority"]!;
    const decision = withRbac.decide(scenario.call, authority);
    const base = 1e9 / opsPerSecond(() => consume(without.decide(scenario.call, authority) ?? scenario), options);
    const ns = 1e9 / opsPerSecond(() => consume(withRbac.decide(scenario.call, authority) ?? scenario), options);
    rows.push([
      scenario.name,
      base.toFixed(0),
      ns.toFixed(0),
      (ns - base).toFixed(0),
      decision === undefined ? "allow" : "deny",
    ]);
  }
  printTable(
    `The server's checks per call (route table: virtual host, route, HTTP filters), ${POLICIES} RBAC policies (ns per call; goals: RBAC <= 1,000 ns, and ~0 when the call has none of the headers the policies read; the first row is one policy, for the cost that does not depend on their number)`,
    ["policies", "without RBAC", "with RBAC", "RBAC's cost", "decision"],
    rows,
  );
}

for (const server of started) server.child.kill();
await controlPlane.close();
rmSync(dir, { recursive: true, force: true });
process.exit(0);
