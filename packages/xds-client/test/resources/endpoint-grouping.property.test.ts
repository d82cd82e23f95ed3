// EDS grouping (endpoint.ts): localities are grouped by priority (found by a scan while there are few priorities, by
// a map past SCANNED_PRIORITIES), locality names and endpoint addresses are checked for duplicates (the first kept
// inline, a set made for a second; names compared one by one up to SCANNED_LOCALITIES). Proven against a model that
// does it the plain way (a map of priorities, a set per priority, one set of addresses): for random assignments with
// many priorities, repeated names and repeated addresses, the update and the error text are the model's.
import { HealthStatus } from "@xdskit/protos/envoy/config/core/v3/health_check_pb";
import { ClusterLoadAssignmentSchema } from "@xdskit/protos/envoy/config/endpoint/v3/endpoint_pb";
import fc from "fast-check";
import { expect, it } from "vitest";
import { endpointResourceType } from "../../src/resources/index.js";
import { decodeWith, type Init } from "./context.js";

type ClaInit = Init<typeof ClusterLoadAssignmentSchema>;

interface LocalitySpec {
  readonly zone: string;
  readonly priority: number;
  readonly hosts: readonly number[];
}

/** Localities over `priorities` (from 0), their zones from `zones` names, one to three hosts each. */
const localityArb = (priorities: number, zones: number): fc.Arbitrary<LocalitySpec> =>
  fc.record({
    zone: fc.integer({ min: 0, max: zones - 1 }).map((z) => `z${z}`),
    priority: fc.integer({ min: 0, max: priorities - 1 }),
    hosts: fc.array(fc.integer({ min: 0, max: 2000 }), { minLength: 1, maxLength: 3 }),
  });

/**
 * Assignments that reach every branch: many localities in one priority (past the name scan's 8, with repeats), many
 * priorities (past the priority scan's 8, with gaps: at most 10, all of them reported), and repeated addresses.
 */
const assignmentArb = fc.oneof(
  fc.array(localityArb(1, 14), { minLength: 9, maxLength: 16, size: "max" }),
  fc.array(localityArb(11, 3), { minLength: 9, maxLength: 24, size: "max" }),
  fc.array(localityArb(3, 12), { maxLength: 30, size: "max" }),
  fc.array(
    fc.record({
      zone: fc.constantFrom("a", "b"),
      priority: fc.constantFrom(0, 1),
      hosts: fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 1, maxLength: 2 }),
    }),
    { maxLength: 3 },
  ),
);

const address = (host: number) => `10.0.${host >> 8}.${host & 255}`;

function message(localities: readonly LocalitySpec[]): ClaInit {
  return {
    clusterName: "c",
    endpoints: localities.map((l) => ({
      locality: { region: "r", zone: l.zone },
      loadBalancingWeight: 1,
      priority: l.priority,
      lbEndpoints: l.hosts.map((host) => ({
        hostIdentifier: {
          case: "endpoint" as const,
          value: {
            address: {
              address: {
                case: "socketAddress" as const,
                value: { address: address(host), portSpecifier: { case: "portValue" as const, value: 80 } },
              },
            },
          },
        },
        healthStatus: HealthStatus.HEALTHY,
      })),
    })),
  };
}

/** What the update should be, worked out the plain way: its priorities (zones and addresses) or its error text. */
function model(localities: readonly LocalitySpec[]): { priorities: string[][][] } | { error: string } {
  const errors: string[] = [];
  const byPriority = new Map<number, { names: Set<string>; zones: string[][] }>();
  const seen = new Set<string>();
  localities.forEach((l, i) => {
    let duplicate = false;
    l.hosts.forEach((host, j) => {
      const key = `${address(host)}:80`;
      if (seen.has(key)) {
        errors.push(`endpoints[${i}].lb_endpoints[${j}]: duplicate endpoint address "${key}"`);
        duplicate = true;
      }
      seen.add(key);
    });
    if (duplicate) return;
    let group = byPriority.get(l.priority);
    if (group === undefined) {
      group = { names: new Set(), zones: [] };
      byPriority.set(l.priority, group);
    }
    if (group.names.has(l.zone)) {
      errors.push(
        `endpoints[${i}]: duplicate locality {region="r", zone="${l.zone}", sub_zone=""} found in priority ${l.priority}`,
      );
      return;
    }
    group.names.add(l.zone);
    group.zones.push([l.zone, ...l.hosts.map(address)]);
  });
  const present = [...byPriority.keys()].sort((a, b) => a - b);
  let expected = 0;
  for (const priority of present) {
    for (; expected < priority; expected++) errors.push(`endpoints: priority ${expected} empty`);
    expected = priority + 1;
  }
  if (errors.length > 0) return { error: errors.join("; ") };
  return { priorities: present.map((p) => byPriority.get(p)!.zones) };
}

it("groups localities and finds duplicates as a map of priorities and sets of names and addresses do", () => {
  const seen = { ok: 0, failed: 0 };
  fc.assert(
    fc.property(assignmentArb, (localities) => {
      const result = decodeWith(endpointResourceType, ClusterLoadAssignmentSchema, message(localities));
      const expected = model(localities);
      if ("error" in expected) {
        seen.failed += 1;
        expect(result.ok).toBe(false);
        if (!result.ok) expect(result.error).toBe(expected.error);
        return;
      }
      if (!result.ok) throw new Error(result.error);
      seen.ok += 1;
      const priorities = result.value.priorities.map((p) =>
        p.localities.map((l) => [l.locality.zone, ...l.endpoints.map((e) => e.addresses[0]!.address)]),
      );
      expect(priorities).toEqual(expected.priorities);
    }),
    { numRuns: 600 },
  );
  // Both outcomes came up.
  expect(seen.ok).toBeGreaterThan(50);
  expect(seen.failed).toBeGreaterThan(50);
});
