// A47 resource names: old-style names (any string not starting with `xdstp:`) and xdstp URIs
// `xdstp://<authority>/<resource type>/<id>[?<context params>]`, canonicalised with their context params sorted.

/** The cache slot of old-style names (A47: a separate authority). */
export const OLD_STYLE_AUTHORITY = "#old";

export type ParsedResourceName =
  | { readonly ok: true; readonly authority: string; readonly name: string; readonly xdstp: boolean }
  | { readonly ok: false; readonly error: string };

/**
 * Parses `name` watched as `typeName` (the message full name, e.g. `envoy.config.listener.v3.Listener`).
 * For xdstp names, `name` in the result is canonical: context params sorted by key (the last of duplicates wins).
 */
export function parseResourceName(name: string, typeName: string): ParsedResourceName {
  if (!name.startsWith("xdstp:")) return { ok: true, authority: OLD_STYLE_AUTHORITY, name, xdstp: false };
  if (!name.startsWith("xdstp://")) return { ok: false, error: `xdstp name "${name}" does not start with xdstp://` };
  const rest = name.slice("xdstp://".length);
  const hash = rest.indexOf("#");
  const withoutFragment = hash < 0 ? rest : rest.slice(0, hash);
  const query = withoutFragment.indexOf("?");
  const path = query < 0 ? withoutFragment : withoutFragment.slice(0, query);
  const slash = path.indexOf("/");
  if (slash < 0) return { ok: false, error: `xdstp name "${name}" has no resource type` };
  const authority = path.slice(0, slash);
  const typeAndId = path.slice(slash + 1);
  const typeEnd = typeAndId.indexOf("/");
  const type = typeEnd < 0 ? typeAndId : typeAndId.slice(0, typeEnd);
  if (type === "") return { ok: false, error: `xdstp name "${name}" has no resource type` };
  if (type !== typeName) {
    return { ok: false, error: `xdstp name "${name}" names resource type ${type}, watched as ${typeName}` };
  }
  if (typeEnd < 0) return { ok: false, error: `xdstp name "${name}" has no resource id` };
  let canonical = `xdstp://${authority}/${typeAndId}`;
  if (query >= 0) {
    const params = new Map<string, string>();
    for (const part of withoutFragment.slice(query + 1).split("&")) {
      if (part === "") continue;
      const eq = part.indexOf("=");
      params.set(eq < 0 ? part : part.slice(0, eq), eq < 0 ? "" : part.slice(eq + 1));
    }
    if (params.size > 0) {
      const sorted = [...params].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      canonical += `?${sorted.map(([k, v]) => `${k}=${v}`).join("&")}`;
    }
  }
  return { ok: true, authority, name: canonical, xdstp: true };
}

/** The authority a resource name belongs to, without validating the type (for names read off responses). */
export function authorityOfName(name: string): string | undefined {
  if (!name.startsWith("xdstp:")) return OLD_STYLE_AUTHORITY;
  if (!name.startsWith("xdstp://")) return undefined;
  const rest = name.slice("xdstp://".length);
  const slash = rest.indexOf("/");
  return slash < 0 ? undefined : rest.slice(0, slash);
}

/** The canonical form of a name read off a response (same rules as `parseResourceName`, type not checked). */
export function canonicalName(name: string): string {
  if (!name.startsWith("xdstp://")) return name;
  const rest = name.slice("xdstp://".length);
  const slash = rest.indexOf("/");
  const typeEnd = slash < 0 ? -1 : rest.indexOf("/", slash + 1);
  if (slash < 0 || typeEnd < 0) return name;
  const type = rest.slice(slash + 1, typeEnd);
  const parsed = parseResourceName(name, type);
  return parsed.ok ? parsed.name : name;
}
