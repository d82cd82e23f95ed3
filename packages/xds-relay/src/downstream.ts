import { Code } from "@connectrpc/connect";
import {
  type ChangedVariants,
  InvalidRequestError,
  type ResourceSource,
  type SourceStream,
  type TypeSubscription,
} from "@xdskit/control-plane/internal";
import { paramsKey } from "./params.js";
import type { RelayTable } from "./relay-table.js";
import type { Upstream } from "./upstream.js";

interface Subscribed {
  readonly name: string;
  readonly paramsKey: string;
}

interface TypeRecord {
  /** The subscription's key when last seen: the same key, the same subscriptions. */
  key: string;
  /** By the stream layer's slot key (name and parameters). */
  readonly slots: Map<string, Subscribed>;
}

/**
 * The relay as the resource source of its server (the control plane's stream layer): serves from the relay table,
 * and turns what each downstream stream subscribes to into references on upstream subscriptions.
 */
export function createRelaySource(table: RelayTable, upstream: Upstream): ResourceSource {
  const streams = new Map<number, Map<string, TypeRecord>>();

  const release = (typeUrl: string, subscribed: Subscribed) =>
    upstream.release(typeUrl, subscribed.name, subscribed.paramsKey);

  return {
    resources: table,
    attach(changed: (changed: ChangedVariants) => void) {
      table.attach(changed);
    },
    subscribed(stream: SourceStream, sub: TypeSubscription) {
      let types = streams.get(stream.id);
      const record = types?.get(sub.typeUrl);
      if (record?.key === sub.key) return;
      if (sub.wildcard) {
        // docs/decisions.md#relay-wildcards
        throw new InvalidRequestError(
          `the relay serves resources by name: a wildcard subscription to ${sub.typeUrl} is not served`,
          Code.Unimplemented,
        );
      }
      if (!types) {
        types = new Map();
        streams.set(stream.id, types);
      }
      const previous = record?.slots;
      const slots = new Map<string, Subscribed>();
      for (const [key, slot] of sub.slots) {
        const known = previous?.get(key);
        if (known) slots.set(key, known);
        else {
          slots.set(key, { name: slot.name, paramsKey: paramsKey(slot.params) });
          upstream.acquire(sub.typeUrl, slot.name, slot.params);
        }
      }
      for (const [key, subscribed] of previous ?? []) if (!slots.has(key)) release(sub.typeUrl, subscribed);
      types.set(sub.typeUrl, { key: sub.key, slots });
    },
    closed(stream: SourceStream) {
      const types = streams.get(stream.id);
      if (!types) return;
      streams.delete(stream.id);
      for (const [typeUrl, record] of types)
        for (const subscribed of record.slots.values()) release(typeUrl, subscribed);
    },
  };
}
