// Reading the bootstrap's JSON: each problem recorded with the JSON path of its field, so that all of them are
// reported at once.
export type Json = unknown;
export type JsonObject = Record<string, Json>;

export class Reader {
  readonly problems: string[] = [];
  problem(path: string, message: string): void {
    this.problems.push(`${path}: ${message}`);
  }
  isObject(value: Json): value is JsonObject {
    return typeof value === "object" && value !== null && !Array.isArray(value);
  }
  object(value: Json, path: string): JsonObject | undefined {
    if (this.isObject(value)) return value;
    this.problem(path, `expected an object, got ${describe(value)}`);
    return undefined;
  }
  array(value: Json, path: string): Json[] | undefined {
    if (Array.isArray(value)) return value;
    this.problem(path, `expected an array, got ${describe(value)}`);
    return undefined;
  }
  string(value: Json, path: string): string | undefined {
    if (typeof value === "string") return value;
    this.problem(path, `expected a string, got ${describe(value)}`);
    return undefined;
  }
  /** The field's value, or undefined with a problem recorded when it is missing. */
  required(obj: JsonObject, key: string, path: string): Json {
    if (obj[key] === undefined) this.problem(path, "is required");
    return obj[key];
  }
  requiredString(obj: JsonObject, key: string, path: string): string | undefined {
    const value = this.required(obj, key, path);
    return value === undefined ? undefined : this.string(value, path);
  }
  /** `path` names `obj` (`$` for the root). */
  optionalString(obj: JsonObject, key: string, path: string): string | undefined {
    return obj[key] === undefined ? undefined : this.string(obj[key], path === "$" ? key : `${path}.${key}`);
  }
  stringMap(value: Json, path: string): Record<string, string> {
    const out: Record<string, string> = {};
    const obj = this.object(value, path);
    if (!obj) return out;
    for (const [k, v] of Object.entries(obj)) {
      const s = this.string(v, `${path}.${k}`);
      if (s !== undefined) out[k] = s;
    }
    return Object.freeze(out);
  }
}

function describe(value: Json): string {
  if (value === null || value === undefined) return String(value);
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : `${typeof value} ${JSON.stringify(value)}`;
}
