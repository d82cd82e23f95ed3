// Helpers for the wrapper's end-to-end tests over HTTP/2: what the server saw the client subscribe to, a recording
// logger, and CSDS rows.
import type { ManagementServer, RequestEvent } from "@xdskit/control-plane";
import { ClientResourceStatus } from "@xdskit/protos/envoy/admin/v3/config_dump_shared_pb";
import type { Logger, XdsClient } from "@xdskit/xds-client";
import { labelOf } from "./watcher-suite.js";

/** The locators a request subscribes (SotW: all of them; delta: those it adds), as `name{k=v,...}`, sorted. */
export function locatorsOf(event: RequestEvent): string[] {
  const locators = event.kind === "sotw" ? event.request.resourceLocators : event.request.resourceLocatorsSubscribe;
  return locators.map((l) => labelOf(l.name, l.dynamicParameters)).sort();
}

/** Plain names a request subscribes (SotW: all; delta: added), sorted. */
export function namesOf(event: RequestEvent): string[] {
  return [...(event.kind === "sotw" ? event.request.resourceNames : event.request.resourceNamesSubscribe)].sort();
}

/** What the client is subscribed to for a type on the server's side: SotW's latest request, or the delta sum. */
export function subscribedOn(server: ManagementServer, typeUrl: string, after = 0): string[] {
  const requests = server.hooks.requests().filter((r) => r.typeUrl === typeUrl && r.seq > after);
  const set = new Set<string>();
  for (const r of requests) {
    if (r.kind === "sotw") {
      set.clear();
      for (const n of r.request.resourceNames) set.add(n);
      for (const l of r.request.resourceLocators) set.add(labelOf(l.name, l.dynamicParameters));
    } else {
      for (const n of r.request.resourceNamesSubscribe) set.add(n);
      for (const l of r.request.resourceLocatorsSubscribe) set.add(labelOf(l.name, l.dynamicParameters));
      for (const n of r.request.resourceNamesUnsubscribe) set.delete(n);
      for (const l of r.request.resourceLocatorsUnsubscribe) set.delete(labelOf(l.name, l.dynamicParameters));
    }
  }
  return [...set].sort();
}

export interface RecordingLogger extends Logger {
  readonly lines: string[];
}

export function recordingLogger(): RecordingLogger {
  const lines: string[] = [];
  const log = (level: string) => (message: string) => {
    lines.push(`${level} ${message}`);
  };
  return { lines, error: log("error"), warn: log("warn"), info: log("info"), debug: log("debug") };
}

/** CSDS entries of one type as `name STATUS` plus ` (error_state details)` when set. */
export function csdsWithErrors(client: XdsClient, typeUrl: string): string[] {
  return client
    .dumpResources()
    .genericXdsConfigs.filter((g) => g.typeUrl === typeUrl)
    .map((g) => {
      const details = g.errorState?.details;
      return `${g.name} ${ClientResourceStatus[g.clientStatus]}${details ? ` (${details})` : ""}`;
    })
    .sort();
}

/** Polls `check` until it stops throwing (or rethrows after `timeoutMs`). */
export async function eventually(check: () => void, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      check();
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((r) => setTimeout(r, 10));
    }
  }
}
