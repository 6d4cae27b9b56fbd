// The class a search connection's bean is found by. The bean is the official OpenSearch client
// itself (`Client` of `@opensearch-project/opensearch`), whose package is loaded only when
// `search()` makes one: this class carries none of it, and stands for it by type and by
// `instanceof`.
import type { Client } from "@opensearch-project/opensearch";

// The clients `search()` made: `instanceof SearchClient` holds for them alone.
const made = new WeakSet<object>();

/** Marks `client` as one of `search()`'s beans. */
export function markSearchClient<T extends object>(client: T): T {
  made.add(client);
  return client;
}

/**
 * A search connection's client, as `search()` of `@thaw/thaw/search` makes it a bean: the
 * official OpenSearch `Client` (`search`, `index`, `bulk`, `get`, `count`, `scroll`, point in
 * time, `indices.*`, `helpers`...), configured from its `search:` entry. Inject it by class
 * (`@Autowired(SearchClient)`: the primary connection's) or by the entry's name
 * (`@Autowired("logs")`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { SearchClient } from "@thaw/thaw/search";
 *
 * // Only search() makes one: the class is the token beans are found by.
 * assert.equal({} instanceof SearchClient, false);
 * ```
 */
export abstract class SearchClient {
  /** Whether `value` is a client `search()` made. */
  static [Symbol.hasInstance](value: unknown): boolean {
    return typeof value === "object" && value !== null && made.has(value);
  }
}

/** Its instances are the official client, with all of its API. */
export interface SearchClient extends Client {}
