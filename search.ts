/**
 * Search connections: each `search:` entry of the configuration (the one the migration runner
 * reads: hosts, basic, API key, bearer or AWS SigV4 authentication, TLS, timeouts, proxy) as a
 * bean of the official OpenSearch client, its migrations run before the app serves. An app that
 * does not import this entry point carries none of it; the client's package
 * (`@opensearch-project/opensearch`, an optional peer dependency) is loaded only when `search()`
 * makes a client.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { bootstrap } from "@thaw/thaw";
 * import { search, SearchClient } from "@thaw/thaw/search";
 *
 * const app = await bootstrap({
 *   config: { search: [{ name: "main", hosts: "http://127.0.0.1:9200" }] },
 *   search: search(),
 * });
 * const client = app.getBean(SearchClient); // the primary connection's; app.getBean("main") too
 * assert.equal(client, app.getBean("main"));
 * assert.equal(typeof client.search, "function"); // the official client's whole API
 * await app.close(); // closes the client, after the beans that use it
 * ```
 *
 * @module
 */
export { search, type SearchOptions } from "./src/search/search_setup.ts";
export type { SearchFeature } from "./src/search/search_feature.ts";
export { SearchClient } from "./src/search/search_client.ts";
