/** What a migration file becomes: how the runner applies it. */
export type SearchRequestKind =
  /** An explicit envelope: sent as it is. */
  | "request"
  /** `PUT /_index_template/{name}`, an upsert. */
  | "template"
  /** ISM policy: read it, then create or update it with the sequence numbers read. */
  | "policy"
  /** `HEAD /{name}`, then `PUT /{name}` only when the index is absent. */
  | "index"
  /**
   * A `*-reindex.json` file: a new index, the documents of the alias's index copied into it by
   * `_reindex`, then the alias moved to it (see {@linkcode ReindexSpec}).
   */
  | "reindex";

/** What a `*-reindex.json` file asks for: move `alias` to a new index holding the documents. */
export interface ReindexSpec {
  /** The alias readers and writers use; it ends on {@linkcode ReindexSpec.index}. */
  readonly alias: string;
  /** The new index (lowercase), created with the file's `settings` and `mappings`. */
  readonly index: string;
  /** The index to copy from; absent: the alias's write index (or only index) at run time. */
  readonly source?: string;
  /** `_reindex`'s `script` (e.g. `{ "source": "...", "lang": "painless" }`), as written. */
  readonly script?: Readonly<Record<string, unknown>>;
  /** Delete the source index once the alias is on the new one (default: kept). */
  readonly deleteSource: boolean;
  /**
   * Lift the source's write block once the alias is on the new index (default: it stays). A node
   * that has not seen the swap yet still sends writes through the alias to the source: blocked,
   * they are refused, and the application's retry reaches the new index; unblocked, they land in
   * the source, lost to the alias, as do writes that name the source itself.
   */
  readonly unblockSource: boolean;
  /**
   * An undo file's `index_uuid`: the `index.uuid` of {@linkcode ReindexSpec.index}, which the
   * user confirms is the index the reindex moved the alias off, where the reindex's record does
   * not say (written by an earlier version). Refused in any other file.
   */
  readonly indexUuid?: string;
}

/** The methods an envelope may send. */
export type SearchMethod = "GET" | "PUT" | "POST" | "DELETE" | "HEAD" | "PATCH";

/** The request a migration file becomes. */
export interface SearchRequest {
  readonly kind: SearchRequestKind;
  readonly method: SearchMethod;
  /** Starts with one `/`; names in it are percent-encoded. */
  readonly path: string;
  readonly body?: Readonly<Record<string, unknown>>;
  /** The template, policy or index name, for messages. */
  readonly name?: string;
  /**
   * A `POST`, `DELETE` or `PATCH` envelope without `"repeatable": true`: it runs once, and a
   * change after it ran is reported, not sent.
   */
  readonly runOnce?: true;
  /**
   * `reindex` only: what to move. `body` is then the new index's `{ settings, mappings }`, as
   * `PUT /{index}` sends it; `method` and `path` are `POST /_reindex`.
   */
  readonly reindex?: ReindexSpec;
}
