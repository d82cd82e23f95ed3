// RE2 full matches for `safe_regex` matchers. xds-client validated each pattern as RE2 syntax when it decoded the
// resource; the pattern runs here as a JavaScript RegExp anchored at both ends, as @xdskit/connect-xds runs route
// patterns (docs/decisions.md#connect-xds-route-matching). One place, so that the server follows the client when
// the client's regex engine changes.

/** A full-match test for an RE2 pattern (`(?P<name>` read as `(?<name>`). */
export function compileFullMatch(regex: string, ignoreCase: boolean): (value: string) => boolean {
  const compiled = new RegExp(`^(?:${regex.replaceAll("(?P<", "(?<")})$`, ignoreCase ? "i" : "");
  return (value) => compiled.test(value);
}
