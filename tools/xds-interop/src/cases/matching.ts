// path_matching and header_matching: the client sends UnaryCall and EmptyCall; each sub-case puts one route (or
// two) before the default route "/" -> MIG_default and checks which MIG each method's RPCs reach.
import { RDS_TYPE_URL } from "@xdskit/control-plane";
import { methodsGoTo } from "../checks.js";
import type { RpcMethod } from "../client-adapter.js";
import type { ClientInit, InteropCase } from "../driver.js";
import { ANY_PATH, backendService, header, type RouteInit, urlMap } from "../resources.js";
import { ALTERNATE_SERVICE, DEFAULT_SERVICE, localGroup, names, serveDefaultService } from "./setup.js";

type Destination = "default" | "alternate";

export interface MatchingSubCase {
  readonly name: string;
  /** The routes before the default one; `cluster` names DEFAULT_SERVICE or ALTERNATE_SERVICE. */
  readonly routes: readonly RouteInit[];
  readonly expect: Readonly<Record<RpcMethod, Destination>>;
}

const TO_ALTERNATE = { cluster: ALTERNATE_SERVICE } as const;
const DEFAULT_ROUTE: RouteInit = { match: ANY_PATH, cluster: DEFAULT_SERVICE };
/** The URL map every matching case starts from: the default route only. */
const DEFAULT_ONLY: MatchingSubCase = {
  name: "default route only",
  routes: [],
  expect: { UnaryCall: "default", EmptyCall: "default" },
};

export const PATH_SUB_CASES: readonly MatchingSubCase[] = [
  {
    name: "path EmptyCall",
    routes: [
      { match: { pathSpecifier: { case: "path", value: "/grpc.testing.TestService/EmptyCall" } }, ...TO_ALTERNATE },
    ],
    expect: { UnaryCall: "default", EmptyCall: "alternate" },
  },
  {
    name: "prefix Unary",
    routes: [
      { match: { pathSpecifier: { case: "prefix", value: "/grpc.testing.TestService/Unary" } }, ...TO_ALTERNATE },
    ],
    expect: { UnaryCall: "alternate", EmptyCall: "default" },
  },
  {
    name: "prefix Unary to MIG_default and path EmptyCall",
    routes: [
      {
        match: { pathSpecifier: { case: "prefix", value: "/grpc.testing.TestService/Unary" } },
        cluster: DEFAULT_SERVICE,
      },
      { match: { pathSpecifier: { case: "path", value: "/grpc.testing.TestService/EmptyCall" } }, ...TO_ALTERNATE },
    ],
    expect: { UnaryCall: "default", EmptyCall: "alternate" },
  },
  {
    name: "regex UnaryCall",
    routes: [
      {
        match: { pathSpecifier: { case: "safeRegex", value: { regex: "^\\/.*\\/UnaryCall$" } } },
        ...TO_ALTERNATE,
      },
    ],
    expect: { UnaryCall: "alternate", EmptyCall: "default" },
  },
  {
    name: "path EmptyCall ignoring case",
    routes: [
      {
        match: {
          pathSpecifier: { case: "path", value: "/gRpC.tEsTinG.tEstseRvice/empTycaLl" },
          caseSensitive: false,
        },
        ...TO_ALTERNATE,
      },
    ],
    expect: { UnaryCall: "default", EmptyCall: "alternate" },
  },
];

/** What run_xds_tests.py's client sends with each method for header_matching. */
export const HEADER_METADATA: ClientInit["metadata"] = {
  EmptyCall: [["xds_md", "empty_ytpme"]],
  UnaryCall: [
    ["xds_md", "unary_yranu"],
    ["xds_md_numeric", "159"],
  ],
};

/** A `string_match` header specifier. */
const text = (kind: "exact" | "prefix" | "suffix", value: string) =>
  ({ case: "stringMatch", value: { matchPattern: { case: kind, value } } }) as const;

const onHeader = (matcher: ReturnType<typeof header>): RouteInit => ({
  match: { ...ANY_PATH, headers: [matcher] },
  ...TO_ALTERNATE,
});

export const HEADER_SUB_CASES: readonly MatchingSubCase[] = [
  {
    name: "exact xds_md",
    routes: [onHeader(header("xds_md", text("exact", "empty_ytpme")))],
    expect: { UnaryCall: "default", EmptyCall: "alternate" },
  },
  {
    name: "prefix xds_md",
    routes: [onHeader(header("xds_md", text("prefix", "un")))],
    expect: { UnaryCall: "alternate", EmptyCall: "default" },
  },
  {
    name: "suffix xds_md",
    routes: [onHeader(header("xds_md", text("suffix", "me")))],
    expect: { UnaryCall: "default", EmptyCall: "alternate" },
  },
  {
    name: "present xds_md_numeric",
    routes: [onHeader(header("xds_md_numeric", { case: "presentMatch", value: true }))],
    expect: { UnaryCall: "alternate", EmptyCall: "default" },
  },
  {
    name: "exact xds_md inverted",
    routes: [onHeader(header("xds_md", text("exact", "unary_yranu"), true))],
    expect: { UnaryCall: "default", EmptyCall: "alternate" },
  },
  {
    name: "range xds_md_numeric",
    routes: [onHeader(header("xds_md_numeric", { case: "rangeMatch", value: { start: 100n, end: 200n } }))],
    expect: { UnaryCall: "alternate", EmptyCall: "default" },
  },
  {
    name: "regex xds_md",
    routes: [onHeader(header("xds_md", { case: "safeRegexMatch", value: { regex: "^em.*me$" } }))],
    expect: { UnaryCall: "default", EmptyCall: "alternate" },
  },
];

function matchingCase(
  name: string,
  subCases: readonly MatchingSubCase[],
  metadata?: ClientInit["metadata"],
): InteropCase {
  return {
    name,
    failOnFailedRpcs: true,
    async run(context) {
      const { profile, world } = context;
      const [defaults, alternates] = await Promise.all([
        world.startGroup("mig-default", 1),
        world.startGroup("mig-2", 1),
      ]);
      const peers: Record<Destination, string[]> = { default: names(defaults), alternate: names(alternates) };
      await serveDefaultService(context, [localGroup("mig-default", defaults)]);
      await world.publish(backendService(ALTERNATE_SERVICE, [localGroup("mig-2", alternates)]));
      context.startClient({
        qps: profile.matchingQps,
        types: ["UnaryCall", "EmptyCall"],
        ...(metadata ? { metadata } : {}),
      });

      let current: MatchingSubCase | undefined;
      const apply = async (subCase: MatchingSubCase) => {
        if (current) await world.publish([urlMap([...subCase.routes, DEFAULT_ROUTE])], [RDS_TYPE_URL]);
        const { UnaryCall: unary, EmptyCall: empty } = subCase.expect;
        await context.steady(
          `${subCase.name}: UnaryCall -> MIG_${unary}, EmptyCall -> MIG_${empty}`,
          methodsGoTo({ UnaryCall: peers[unary], EmptyCall: peers[empty] }),
          profile.matchingCheckRpcs,
        );
        current = subCase;
      };
      await apply(DEFAULT_ONLY);
      for (const subCase of subCases) {
        const bug = context.knownBug(subCase.name);
        if (bug !== undefined) {
          context.trace(`${subCase.name}: skipped (${bug})`);
          continue;
        }
        // A sub-case must change where some method goes, or a client that ignored the new URL map would pass it.
        const same = (["UnaryCall", "EmptyCall"] as const).every((m) => current?.expect[m] === subCase.expect[m]);
        if (same) await apply(DEFAULT_ONLY);
        await apply(subCase);
      }
    },
  };
}

export const pathMatching = matchingCase("path_matching", PATH_SUB_CASES);
export const headerMatching = matchingCase("header_matching", HEADER_SUB_CASES, HEADER_METADATA);
