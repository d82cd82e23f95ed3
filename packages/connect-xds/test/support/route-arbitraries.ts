// Random routes, paths and headers for the route matcher's property tests.
import type { HeaderMatcher, PathMatcher, RouteMatch } from "@xdskit/xds-client";
import fc from "fast-check";

export type HeaderList = readonly (readonly [string, string])[];

const letters = fc.constantFrom("a", "B", "c", "/", ".", "1", "-");
export const word = fc.string({ unit: letters, maxLength: 6 });
const headerName = fc.constantFrom("x-a", "X-B", "content-type", "x-c-bin", "x-num");
const regex = fc.constantFrom("a.*", "[a-c]+", "x|xy", "/a/.*", ".*B", "(?P<g>a)b?", "1+");
const bound = fc.oneof(
  fc.bigInt({ min: -5n, max: 5n }),
  fc.constantFrom(-(2n ** 63n), 2n ** 63n - 1n, 2n ** 53n, -(2n ** 53n) - 1n, 10n ** 15n),
);
const numeric = fc.oneof(
  fc.bigInt({ min: -6n, max: 6n }).map(String),
  fc.constantFrom("+7", "-0", "007", "9007199254740993", "99999999999999999999", "1e3", "", "12a"),
);

const pathMatcher: fc.Arbitrary<PathMatcher> = fc.oneof(
  // Half the routes match every path, so the header matchers are reached.
  { arbitrary: fc.constant({ type: "prefix", value: "", caseSensitive: true } as PathMatcher), weight: 3 },
  fc.record({
    type: fc.constantFrom("prefix", "path"),
    value: word,
    caseSensitive: fc.boolean(),
  }) as fc.Arbitrary<PathMatcher>,
  fc.record({ type: fc.constant("safe_regex"), regex, caseSensitive: fc.boolean() }) as fc.Arbitrary<PathMatcher>,
);

const headerMatcher: fc.Arbitrary<HeaderMatcher> = fc.oneof(
  fc.record({
    name: headerName,
    invert: fc.boolean(),
    type: fc.constantFrom("exact", "prefix", "suffix", "contains"),
    value: word,
    ignoreCase: fc.boolean(),
  }),
  fc.record({ name: headerName, invert: fc.boolean(), type: fc.constant("safe_regex"), regex }),
  fc
    .record({ name: fc.constant("x-num"), invert: fc.boolean(), type: fc.constant("range"), a: bound, b: bound })
    .map(({ a, b, ...rest }) => (a < b ? { ...rest, start: a, end: b } : { ...rest, start: b, end: a })),
  fc.record({ name: headerName, invert: fc.boolean(), type: fc.constant("present"), present: fc.boolean() }),
) as fc.Arbitrary<HeaderMatcher>;

export const routeMatch: fc.Arbitrary<RouteMatch> = fc
  .record({
    path: pathMatcher,
    headers: fc.array(headerMatcher, { maxLength: 3 }),
    fraction: fc.option(fc.integer({ min: 0, max: 1_000_000 }), { nil: undefined }),
  })
  .map(({ path, headers, fraction }) =>
    fraction === undefined ? { path, headers } : { path, headers, fractionPerMillion: fraction },
  );

export const headerList: fc.Arbitrary<HeaderList> = fc.array(
  fc.oneof(
    fc.tuple(fc.constantFrom("x-a", "x-b", "x-c-bin", "content-type"), fc.oneof(word, numeric)),
    fc.tuple(fc.constant("x-num"), numeric),
  ),
  { maxLength: 4 },
);
