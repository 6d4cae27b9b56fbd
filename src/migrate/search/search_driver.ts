import { ConfigError } from "../../config/config_error.ts";
import { MissingPackageError } from "../../runtime/optional_module.ts";
import type { Clock } from "../../runtime/clock.ts";
import type { MigrationDriver } from "../driver.ts";
import { runtimeTransport, type Transport, type TransportFactory } from "./http/transport.ts";
import { planSearchFile } from "./plan/plan_search_file.ts";
import { loadSearchConnections } from "./search_config.ts";
import type { SearchConnection } from "./search_connection.ts";
import { SearchTarget } from "./search_target.ts";
import { searchReportMask } from "./search_report_mask.ts";
import { SearchClient } from "./http/search_client.ts";
import { BUILT_IN_CAPABILITIES } from "../built_in_capabilities.ts";
import type { SearchPlannedFile } from "./search_file.ts";
import { isCodePath } from "../code/code_file.ts";
import { planCodeFile } from "../code/plan_code_file.ts";
import { searchUndoRefusal } from "./search_undo.ts";
import { definedFields } from "../../defined_fields.ts";

/** How the search driver reaches clusters. */
export interface SearchDriverOptions {
  /** Makes each connection's transport; the runtime's `fetch` by default (tests record requests). */
  readonly transport?: TransportFactory;
  /**
   * The clock of each connection's lock (its lease, the wait for it); the system's by default
   * (tests run leases in virtual time).
   */
  readonly clock?: Clock;
}

/**
 * Search migrations: `.json` files (index templates, ISM policies, indices, reindexes, requests)
 * on the OpenSearch connections of `application.yml`. Its targets compare the cluster with the
 * applied files (`--drift`).
 */
export function searchDriver(
  options: SearchDriverOptions = {},
): MigrationDriver<SearchConnection, SearchPlannedFile> {
  return {
    mode: "search",
    noun: "connection",
    extension: ".json",
    capabilities: BUILT_IN_CAPABILITIES.search,
    connections: (context) =>
      loadSearchConnections(context.configDir, context.env, context.optionNames),
    plan: (file, connection, given) =>
      isCodePath(file.path)
        ? planCodeFile(file, given)
        : planSearchFile(file, connection.placeholders),
    async open(connections, context) {
      // Every transport is made before the first request: a setting the runtime cannot honour is
      // a configuration error, found before anything is sent.
      const factory = options.transport ?? runtimeTransport;
      const transports: Transport[] = [];
      for (const connection of connections) {
        try {
          transports.push(await factory(connection));
        } catch (error) {
          for (const t of transports) t.close();
          // Names the connection and the install line already; its kind is kept for the report.
          if (error instanceof MissingPackageError) throw error;
          throw new ConfigError(`connection "${connection.name}": ${(error as Error).message}`, {
            cause: error,
          });
        }
      }
      return connections.map((connection, i) =>
        new SearchTarget(connection, transports[i], context.identity, {
          progress: context.progress,
          ...definedFields({
            signal: context.signal,
            stopTimeoutMs: context.stopTimeoutMs,
            clock: options.clock,
          }),
          requests: context.requests,
          optionNames: context.optionNames,
        })
      );
    },
    undoRefusal: searchUndoRefusal,
    // The credentials' mask is its client's: a client that never sends makes it.
    mask: (connection) =>
      searchReportMask(connection, new SearchClient(connection, UNUSED).credentialsMask),
  };
}

// The transport of a client made only for what it knows of its connection: it sends nothing.
const UNUSED: Transport = {
  fetch: () => Promise.reject(new Error("not a transport: this client sends nothing")),
  close() {},
};
