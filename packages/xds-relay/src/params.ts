import { and, type Expr, TRUE, value } from "@xdskit/constraint-matcher";

// A downstream subscription is a name and a parameter map (TP2: `ResourceLocator { name, dynamic_parameters }`, or
// a name alone, which is the empty map). Subscriptions with equal maps share one upstream subscription.

/** Parameters of a subscription: none for a name subscribed without locator. */
export type Params = Readonly<Record<string, string>>;

export const NO_PARAMS: Params = Object.freeze({});

/** A key for a parameter map, equal for equal maps whatever their order: "" for the empty map. Injective. */
export function paramsKey(params: Params | undefined): string {
  if (params === undefined) return "";
  const keys = Object.keys(params);
  if (keys.length === 0) return "";
  if (keys.length > 1) keys.sort();
  let key = "";
  for (const k of keys) {
    const v = params[k] as string;
    key += `${k.length}:${k}${v.length}:${v}`;
  }
  return key;
}

/**
 * Constraints that every map holding all of `params` matches (and only those): what a change to the answer for
 * `params` can concern, as the stream layer's wake-up index reads it (`key=value` terms are looked up directly).
 */
export function paramsConstraints(params: Params): Expr {
  const keys = Object.keys(params).sort();
  if (keys.length === 0) return TRUE;
  const terms = keys.map((k) => value(k, params[k] as string));
  return and(terms);
}

/** How a subscription reads in logs and errors: `name` or `name{k=v,...}`. */
export function subscriptionText(name: string, params: Params): string {
  const keys = Object.keys(params).sort();
  return keys.length === 0 ? name : `${name}{${keys.map((k) => `${k}=${params[k]}`).join(",")}}`;
}
