import { MigrationFailure } from "../migration_failure.ts";
import type { MigrationRecord } from "./migration_record.ts";
import { recordId } from "./migration_record.ts";
import { errorDetail, type SearchClient, type SearchResponse } from "./search_client.ts";

// The records index is tiny and must not need a replica to be green on a one-node cluster.
// Records are read by search, which sees what the last refresh made visible: the runner refreshes
// once before it lets go of the lock (publish), and a short interval makes the records of a runner
// that died visible within 100 ms on its own.
const INDEX_BODY = {
  settings: { number_of_shards: 1, number_of_replicas: 0, refresh_interval: "100ms" },
  mappings: {
    dynamic: false,
    properties: {
      migration_path: { type: "keyword" },
      connection: { type: "keyword" },
      content_hash: { type: "keyword" },
      executed_at: { type: "date" },
      execution_ms: { type: "long" },
      request: { properties: { method: { type: "keyword" }, path: { type: "keyword" } } },
      runner_version: { type: "keyword" },
      owner: { type: "keyword" },
      expires_at: { type: "date" },
    },
  },
};
// OpenSearch's default and maximum window: larger sets are read page by page.
const PAGE = 10_000;

/** The `framework_migrations` index of one connection: the records and where they live. */
export class RecordStore {
  readonly #client: SearchClient;
  readonly #index: string;
  readonly #connection: string;
  #unpublished = false;

  constructor(client: SearchClient, index: string, connection: string) {
    this.#client = client;
    this.#index = index;
    this.#connection = connection;
  }

  /** The index name. */
  get index(): string {
    return this.#index;
  }

  /**
   * Every record of the connection, by path, in one request per 10,000 records (sorted by path,
   * paged with `search_after`). An absent index means no records.
   */
  async readAll(): Promise<Map<string, MigrationRecord>> {
    const records = new Map<string, MigrationRecord>();
    let after: string[] | undefined;
    for (;;) {
      const response = await this.#client.send("POST", `/${this.#index}/_search`, {
        size: PAGE,
        query: {
          bool: {
            filter: [
              { term: { connection: this.#connection } },
              { exists: { field: "migration_path" } },
            ],
          },
        },
        // unmapped_type: an index made by hand (or a lock written first) may lack the mapping.
        sort: [{ migration_path: { order: "asc", unmapped_type: "keyword" } }],
        track_total_hits: false,
        ...(after ? { search_after: after } : {}),
      });
      if (response.status === 404 && after === undefined) return records;
      this.#expect(response, "read the migration records", `POST /${this.#index}/_search`);
      const hits =
        (response.body as { hits?: { hits?: { _source: MigrationRecord; sort: string[] }[] } })
          .hits?.hits ?? [];
      for (const hit of hits) records.set(hit._source.migration_path, hit._source);
      if (hits.length < PAGE) return records;
      after = hits[hits.length - 1].sort;
    }
  }

  /** Creates the index (1 shard, 0 replicas) unless it exists; a concurrent creation is fine. */
  async ensureIndex(): Promise<void> {
    const head = await this.#client.send("HEAD", `/${this.#index}`);
    if (head.status === 200) return;
    if (head.status !== 404) this.#expect(head, "check the records index", `HEAD /${this.#index}`);
    const created = await this.#client.send("PUT", `/${this.#index}`, INDEX_BODY);
    if (created.status === 400 && errorDetail(created.body).startsWith("resource_already_exists")) {
      return;
    }
    this.#expect(created, "create the records index", `PUT /${this.#index}`);
  }

  /**
   * Writes a record. It is durable when this returns, and visible to searches after the next
   * refresh: {@linkcode RecordStore.publish} makes it so at once. Waiting for a refresh per record
   * (`refresh=wait_for`) would cost a refresh interval per file: 100 s for 1,000 files.
   */
  async write(record: MigrationRecord): Promise<void> {
    const path = `/${this.#index}/_doc/${
      encodeURIComponent(recordId(this.#connection, record.migration_path))
    }`;
    this.#unpublished = true;
    const response = await this.#client.send("PUT", path, record);
    this.#expect(response, `record ${record.migration_path}`, `PUT ${path}`);
  }

  /**
   * Makes the records written so far visible to searches (one `_refresh`), so that a runner that
   * takes the lock next reads them. Never throws: it runs on every exit path, and records that it
   * could not publish still become visible at the next scheduled refresh.
   */
  async publish(): Promise<void> {
    if (!this.#unpublished) return;
    this.#unpublished = false;
    try {
      await this.#client.send("POST", `/${this.#index}/_refresh`);
    } catch {
      // The scheduled refresh publishes them within the index's refresh interval.
    }
  }

  #expect(response: SearchResponse, what: string, request: string): void {
    if (response.status >= 200 && response.status < 300) return;
    throw new MigrationFailure({
      connection: this.#connection,
      request,
      status: response.status,
      reason: `could not ${what}: ${errorDetail(response.body)}`,
    });
  }
}
