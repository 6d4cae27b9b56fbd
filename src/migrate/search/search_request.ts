/** What a migration file becomes: how the runner applies it. */
export type SearchRequestKind =
  /** An explicit envelope: sent as it is. */
  | "request"
  /** `PUT /_index_template/{name}`, an upsert. */
  | "template"
  /** ISM policy: read it, then create or update it with the sequence numbers read. */
  | "policy"
  /** `HEAD /{name}`, then `PUT /{name}` only when the index is absent. */
  | "index";

/** The request a migration file becomes. */
export interface SearchRequest {
  readonly kind: SearchRequestKind;
  readonly method: string;
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
}
