// The endpoint a search request calls, read from its method and path as the conventions name it
// (`search`, `index`, `bulk`, `cluster.health`): the client's events carry no API name. Only
// fixed words make the name (an API's `_` segment, a namespace's fixed second word): an index
// name, a document id or a snapshot's name never does, so the names stay few.

/** What a request's path says of it. */
export interface SearchOperation {
  /** The endpoint's name: `search`, `index`, `indices.create`, `cluster.health`. */
  readonly operation: string;
  /** The index (or indices, `a,b`, or pattern) the path starts with, decoded; none for `/_bulk`. */
  readonly index?: string;
}

type ByMethod = string | { readonly [method: string]: string; readonly other: string };

// The APIs under an index (`/{index}/_x`), and at the root (`/_x`) where they are the same.
const INDEX_APIS: { readonly [segment: string]: ByMethod } = {
  _doc: {
    PUT: "index",
    POST: "index",
    GET: "get",
    DELETE: "delete",
    HEAD: "exists",
    other: "index",
  },
  _create: "create",
  _update: "update",
  _source: { HEAD: "exists_source", other: "get_source" },
  _search: "search",
  _msearch: "msearch",
  _count: "count",
  _bulk: "bulk",
  _mget: "mget",
  _explain: "explain",
  _termvectors: "termvectors",
  _mtermvectors: "mtermvectors",
  _field_caps: "field_caps",
  _delete_by_query: "delete_by_query",
  _update_by_query: "update_by_query",
  _search_shards: "search_shards",
  _refresh: "indices.refresh",
  _flush: "indices.flush",
  _forcemerge: "indices.forcemerge",
  _open: "indices.open",
  _close: "indices.close",
  _stats: "indices.stats",
  _analyze: "indices.analyze",
  _recovery: "indices.recovery",
  _segments: "indices.segments",
  _validate: "indices.validate_query",
  _rollover: "indices.rollover",
  _clone: "indices.clone",
  _split: "indices.split",
  _shrink: "indices.shrink",
  _mapping: {
    PUT: "indices.put_mapping",
    POST: "indices.put_mapping",
    other: "indices.get_mapping",
  },
  _mappings: {
    PUT: "indices.put_mapping",
    POST: "indices.put_mapping",
    other: "indices.get_mapping",
  },
  _settings: { PUT: "indices.put_settings", other: "indices.get_settings" },
  _alias: {
    PUT: "indices.put_alias",
    POST: "indices.put_alias",
    DELETE: "indices.delete_alias",
    HEAD: "indices.exists_alias",
    other: "indices.get_alias",
  },
  _aliases: { POST: "indices.update_aliases", other: "indices.get_alias" },
};

// The index itself (`/{index}`).
const INDEX: ByMethod = {
  PUT: "indices.create",
  DELETE: "indices.delete",
  HEAD: "indices.exists",
  other: "indices.get",
};

// The words that may follow an API's segment and name it further: any for the root namespaces
// whose second segment is always a word of the API (`/_cluster/health`), never a name of the
// user's; only the API's own for the others (`/_search/template`, not a scroll id).
const WORDS: { readonly [segment: string]: ReadonlySet<string> | "any" } = {
  _cluster: "any",
  _cat: "any",
  _ingest: "any",
  _search: new Set(["template", "scroll", "point_in_time"]),
  _msearch: new Set(["template"]),
  _render: new Set(["template"]),
};

// The word after `segment` that names the API further, if it is one.
function wordAfter(segment: string, next: string | undefined): string | undefined {
  const words = WORDS[segment];
  if (words === undefined || next === undefined || !/^_?[a-z_]+$/.test(next)) return undefined;
  const word = next.replace(/^_/, "");
  return words === "any" || words.has(word) ? word : undefined;
}

function pick(api: ByMethod, method: string): string {
  return typeof api === "string" ? api : api[method] ?? api.other;
}

function decoded(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/**
 * The endpoint `method` on `path` calls (a path as the client sends it, each name in it
 * URI-encoded, without its query string), and the index it names.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { searchOperation } from "./search_operation.ts";
 *
 * assert.deepEqual(searchOperation("POST", "/products/_search"), {
 *   operation: "search",
 *   index: "products",
 * });
 * assert.deepEqual(searchOperation("PUT", "/products/_doc/42"), {
 *   operation: "index",
 *   index: "products",
 * });
 * assert.deepEqual(searchOperation("GET", "/_cluster/health"), { operation: "cluster.health" });
 * ```
 */
export function searchOperation(method: string, path: string): SearchOperation {
  const verb = method.toUpperCase();
  const segments = path.split("/").filter((s) => s !== "");
  if (segments.length === 0) return { operation: verb === "HEAD" ? "ping" : "info" };
  const [first, second] = segments;
  if (first.startsWith("_")) {
    const api = INDEX_APIS[first];
    const word = wordAfter(first, second);
    if (word !== undefined) {
      // `/_search/scroll`, `/_msearch/template`, `/_cluster/health`, `/_cat/indices`.
      if (first === "_search" && word === "scroll") return { operation: "scroll" };
      return {
        operation: api === undefined ? `${first.slice(1)}.${word}` : `${pick(api, verb)}_${word}`,
      };
    }
    return { operation: api === undefined ? first.slice(1) : pick(api, verb) };
  }
  const index = decoded(first);
  if (second === undefined) return { operation: pick(INDEX, verb), index };
  // `/{index}/{type}/_search` of old clusters: the API is the first `_` segment.
  const segment = segments.slice(1).find((s) => s.startsWith("_"));
  if (segment === undefined) return { operation: pick(INDEX, verb), index };
  const api = INDEX_APIS[segment];
  const word = wordAfter(segment, segments[segments.indexOf(segment) + 1]);
  if (api !== undefined && word !== undefined) {
    return { operation: `${pick(api, verb)}_${word}`, index };
  }
  return { operation: api === undefined ? segment.slice(1) : pick(api, verb), index };
}
