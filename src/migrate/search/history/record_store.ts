import { isJsonObject, type JsonObject } from "../../files/json_object.ts";
import { MigrationFailure } from "../../migration_error.ts";
import type { FileRecord } from "../../driver.ts";
import type { MigrationRecord } from "./migration_record.ts";
import { fileRecord, recordId } from "./migration_record.ts";
import { errorDetail, type SearchClient, type SearchResponse } from "../http/search_client.ts";
import { definedFields } from "../../../defined_fields.ts";

// The records index is tiny and must not need a replica to be green on a one-node cluster.
// Records are read by search, which sees what the last refresh made visible: the runner refreshes
// once before it lets go of the lock (publish), and a short interval makes the records of a runner
// that died visible within 100 ms on its own.
/** How the records index maps one field. */
interface FieldMapping {
  readonly type?: string;
  readonly properties?: Readonly<Record<string, FieldMapping>>;
}
const PROPERTIES: Readonly<Record<string, FieldMapping>> = {
  migration_path: { type: "keyword" },
  connection: { type: "keyword" },
  content_hash: { type: "keyword" },
  executed_at: { type: "date" },
  execution_ms: { type: "long" },
  request: { properties: { method: { type: "keyword" }, path: { type: "keyword" } } },
  runner_version: { type: "keyword" },
  executed_by: { type: "keyword" },
  owner: { type: "keyword" },
  expires_at: { type: "date" },
};
const INDEX_BODY = {
  // A replica where the cluster has a second node: a lost disk would lose the history (and the
  // next run would send every run-once file again), a red index would stop every runner.
  settings: { number_of_shards: 1, auto_expand_replicas: "0-1", refresh_interval: "100ms" },
  mappings: { dynamic: false, properties: PROPERTIES },
};
// Fields the records are filtered and sorted on: any other type finds no record or fails.
const QUERIED = ["migration_path", "connection"];
// OpenSearch's default and maximum window: larger sets are read page by page.
const PAGE = 10_000;
// A search of an index whose shard is not started yet answers 503: wait for the index, read again.
const READ_RETRIES = 3;

/** One record as a search returned it: its document id, the record, and its sort values. */
interface Hit {
  readonly id: string;
  readonly record: MigrationRecord;
  readonly sort: unknown[] | undefined;
}

/** The `framework_migrations` index of one connection: the records and where they live. */
export class RecordStore {
  readonly #client: SearchClient;
  readonly #index: string;
  readonly #connection: string;
  readonly #waitMs: number;
  #unpublished = false;
  // The document ids of each path's records, the one that counts first: a record written under an
  // earlier version's id is updated there, so a path never gets a second record; and a path may
  // have both (a version that wrote under the new id beside an old record), so a removal must
  // delete each.
  #ids = new Map<string, string[]>();

  /**
   * @param waitMs how long to wait for the index to become usable (the connection's timeout)
   */
  constructor(client: SearchClient, index: string, connection: string, waitMs = 10_000) {
    this.#client = client;
    this.#index = index;
    this.#connection = connection;
    this.#waitMs = waitMs;
  }

  /** The index name. */
  get index(): string {
    return this.#index;
  }

  /**
   * Every record of the connection, by path, in one request per 10,000 records (sorted by path,
   * paged with `search_after`). An absent index means no records. An index that exists but cannot
   * be searched yet (another runner is creating it) is waited for. Where two records share a path
   * (written by two versions of the runner), the later one counts.
   */
  async readAll(): Promise<Map<string, MigrationRecord>> {
    const records = new Map<string, MigrationRecord>();
    const ids = new Map<string, string[]>();
    const request = `POST /${this.#index}/_search`;
    let after: unknown[] | undefined;
    let retries = 0;
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
      }, { repeatable: true }); // a read
      if (response.status === 404 && after === undefined) break;
      if (response.status === 503 && retries < READ_RETRIES) {
        retries++;
        await this.#waitUsable();
        continue;
      }
      this.#expect(response, "read the migration records", request);
      const hits = this.#hits(response, request);
      for (const { id, record } of hits) {
        const path = record.migration_path;
        const seen = records.get(path);
        const known = ids.get(path) ?? [];
        ids.set(path, known);
        if (seen !== undefined && seen.executed_at >= record.executed_at) {
          known.push(id);
          continue;
        }
        records.set(path, record);
        known.unshift(id);
      }
      if (hits.length < PAGE) break;
      after = hits[hits.length - 1].sort;
      if (after === undefined) {
        this.#malformed(response, request, "returned a full page without sort values");
      }
    }
    this.#ids = ids;
    return records;
  }

  /**
   * What {@linkcode RecordStore.readAll} reads, as each record says it: its checksum, and when, by
   * whom and with which runner version it was written, where it holds them.
   */
  async readFileRecords(): Promise<Map<string, FileRecord>> {
    const records = await this.readAll();
    return new Map([...records].map(([path, record]) => [path, fileRecord(record)]));
  }

  /**
   * The record of `path` as the records index holds it now (a `GET` by id, which sees a record
   * written since the last refresh): under the id {@linkcode RecordStore.readAll} found for it,
   * else under {@linkcode recordId}. None: undefined.
   */
  async read(path: string): Promise<MigrationRecord | undefined> {
    const id = this.#ids.get(path)?.[0] ?? await recordId(this.#connection, path);
    const doc = `/${this.#index}/_doc/${encodeURIComponent(id)}`;
    const response = await this.#client.send("GET", doc, undefined, { repeatable: true });
    if (response.status === 404) return undefined;
    this.#expect(response, `read the record of ${path}`, `GET ${doc}`, path);
    const body = response.body;
    const source = isJsonObject(body) && isJsonObject(body._source) ? body._source : undefined;
    if (source === undefined || source.migration_path !== path) {
      this.#malformed(response, `GET ${doc}`, `answered without the record of ${path}`);
    }
    return source as unknown as MigrationRecord;
  }

  /**
   * Creates the index (1 shard, 0 replicas) unless it exists, and waits until it can be used; a
   * concurrent creation is fine. An existing index is checked for what the runner relies on: a
   * stored `_source`, and `keyword` for the fields it filters and sorts on; record fields it lacks
   * (an index made by hand) are added to its mapping, before any record could map them otherwise.
   */
  async ensureIndex(): Promise<void> {
    const request = `GET /${this.#index}/_mapping`;
    const current = await this.#client.send("GET", `/${this.#index}/_mapping`);
    if (current.status === 404) return await this.#create();
    this.#expect(current, "read the mapping of the records index", request);
    if (!isJsonObject(current.body)) {
      this.#malformed(current, request, "answered without a mapping");
    }
    for (const [name, index] of Object.entries(current.body as JsonObject)) {
      const mappings = isJsonObject(index) && isJsonObject(index.mappings) ? index.mappings : {};
      await this.#checkMapping(name, mappings, current.status, request);
    }
  }

  /**
   * Writes a record: over the record the path had (whatever its id), else under
   * {@linkcode recordId}. It is durable when this returns, and visible to searches after the
   * next refresh: {@linkcode RecordStore.publish} makes it so at once. Waiting for a refresh per
   * record (`refresh=wait_for`) would cost a refresh interval per file: 100 s for 1,000 files.
   */
  async write(record: MigrationRecord): Promise<void> {
    const known = this.#ids.get(record.migration_path);
    const id = known?.[0] ?? await recordId(this.#connection, record.migration_path);
    const path = `/${this.#index}/_doc/${encodeURIComponent(id)}`;
    this.#unpublished = true;
    // Repeatable: the same document under the same id.
    const response = await this.#client.send("PUT", path, record, { repeatable: true });
    this.#expect(response, `record ${record.migration_path}`, `PUT ${path}`);
    if (known === undefined) this.#ids.set(record.migration_path, [id]);
  }

  /**
   * Deletes every record document of `path` on this connection: each one the last
   * {@linkcode RecordStore.readAll} found (under an earlier version's id, under
   * {@linkcode recordId}, or both), and the one {@linkcode RecordStore.write} would write. A
   * document that is not there is fine. Durable when this returns; gone for searches after the
   * next refresh, which {@linkcode RecordStore.publish} then does.
   */
  async remove(path: string): Promise<void> {
    const ids = new Set(this.#ids.get(path));
    // Also when readAll did not see the path: a record written since the last refresh is not
    // searchable yet, and a record of this version is under this id.
    ids.add(await recordId(this.#connection, path));
    // Set first: the deletes that did land must reach the next reader even when a later one fails.
    this.#unpublished = true;
    for (const id of ids) {
      const doc = `/${this.#index}/_doc/${encodeURIComponent(id)}`;
      // Repeatable: a second delete of the same document finds nothing, which is fine.
      const response = await this.#client.send("DELETE", doc, undefined, { repeatable: true });
      // No such document, or no records index at all: nothing to delete.
      if (response.status === 404) continue;
      this.#expect(response, `delete the record of ${path}`, `DELETE ${doc}`, path);
    }
    this.#ids.delete(path);
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
      await this.#client.send("POST", `/${this.#index}/_refresh`, undefined, { repeatable: true });
    } catch {
      // The scheduled refresh publishes them within the index's refresh interval.
    }
  }

  /**
   * Makes every record written so far visible, whoever wrote it: a runner that took the lock over
   * from one that died reads what that runner recorded in its last refresh interval.
   */
  async refresh(): Promise<void> {
    this.#unpublished = true;
    await this.publish();
  }

  async #create(): Promise<void> {
    // Repeatable: a second creation is refused as existing, which is taken as a success.
    const created = await this.#client.send("PUT", `/${this.#index}`, INDEX_BODY, {
      repeatable: true,
    });
    // Another runner created it in between: its shard may not be started yet either.
    const concurrent = created.status === 400 &&
      errorDetail(created.body).startsWith("resource_already_exists");
    if (!concurrent) this.#expect(created, "create the records index", `PUT /${this.#index}`);
    await this.#waitUsable();
  }

  // Waits, on the cluster, until the index's primary shards are started. Yellow alone is not
  // enough: a new index's initializing primary counts as yellow, and a search then still gets 503.
  // No initializing shard, and at least yellow (a replica a one-node cluster cannot place is fine).
  async #waitUsable(): Promise<void> {
    // The cluster answers before the request's own timeout would abort it.
    const ms = Math.max(1, Math.floor(this.#waitMs * 0.8));
    const path = `/_cluster/health/${this.#index}?wait_for_status=yellow` +
      `&wait_for_no_initializing_shards=true&timeout=${ms}ms`;
    const request = `GET /_cluster/health/${this.#index}`;
    const response = await this.#client.send("GET", path);
    const body = isJsonObject(response.body) ? response.body : {};
    if (response.status === 408 || body.timed_out === true) {
      throw new MigrationFailure({
        connection: this.#connection,
        request,
        status: response.status,
        reason: `the records index "${this.#index}" was not usable within ${ms / 1000} s ` +
          `(its health: ${typeof body.status === "string" ? body.status : "unknown"})`,
      });
    }
    this.#expect(response, "wait for the records index to be usable", request);
    if (body.status !== "green" && body.status !== "yellow") {
      this.#malformed(response, request, "answered without the index's health");
    }
  }

  async #checkMapping(
    name: string,
    mappings: JsonObject,
    status: number,
    request: string,
  ): Promise<void> {
    const fail = (reason: string): never => {
      throw new MigrationFailure({
        connection: this.#connection,
        request,
        status,
        reason: `the records index "${name}" ${reason}; ` +
          `set migrations.index to a new index, or delete this one to have it made again`,
      });
    };
    if (isJsonObject(mappings._source) && mappings._source.enabled === false) {
      fail(`stores no _source ("_source": {"enabled": false}), and records are read from it`);
    }
    const properties = isJsonObject(mappings.properties) ? mappings.properties : {};
    for (const field of QUERIED) {
      const actual = properties[field];
      if (actual === undefined) continue;
      const type = isJsonObject(actual) && typeof actual.type === "string" ? actual.type : "object";
      if (type !== PROPERTIES[field].type) {
        fail(`maps ${field} as ${type}; it must be ${PROPERTIES[field].type}`);
      }
    }
    const missing = Object.fromEntries(
      Object.entries(PROPERTIES).filter(([field]) => properties[field] === undefined),
    );
    if (Object.keys(missing).length === 0) return;
    const path = `/${name}/_mapping`;
    const added = await this.#client.send("PUT", path, { properties: missing }, {
      repeatable: true, // adding the same fields again changes nothing
    });
    this.#expect(added, "add the record fields to the records index's mapping", `PUT ${path}`);
  }

  // The hits of a search of the records, each checked for what the runner reads.
  #hits(response: SearchResponse, request: string): Hit[] {
    const body = response.body;
    const outer = isJsonObject(body) && isJsonObject(body.hits) ? body.hits : undefined;
    if (!outer || !Array.isArray(outer.hits)) this.#malformed(response, request, "has no hits");
    return (outer!.hits as unknown[]).map((hit) => {
      if (!isJsonObject(hit) || typeof hit._id !== "string") {
        return this.#malformed(response, request, "has a hit without an _id");
      }
      const source = hit._source;
      if (!isJsonObject(source)) {
        return this.#malformed(
          response,
          request,
          `returned record ${hit._id} without its _source: the index stores none ` +
            `("_source": {"enabled": false}?), and records are read from it`,
        );
      }
      if (typeof source.migration_path !== "string") {
        return this.#malformed(response, request, `has record ${hit._id} without a migration_path`);
      }
      // A record without a hash (made by hand, or damaged) is one whose file changed: re-applied.
      const record = {
        ...source,
        content_hash: typeof source.content_hash === "string" ? source.content_hash : "",
        executed_at: typeof source.executed_at === "string" ? source.executed_at : "",
      } as unknown as MigrationRecord;
      return { id: hit._id, record, sort: Array.isArray(hit.sort) ? hit.sort : undefined };
    });
  }

  #malformed(response: SearchResponse, request: string, what: string): never {
    throw new MigrationFailure({
      connection: this.#connection,
      request,
      status: response.status,
      reason: `unexpected answer: the records index "${this.#index}" ${what}`,
    });
  }

  #expect(response: SearchResponse, what: string, request: string, file?: string): void {
    if (response.status >= 200 && response.status < 300) return;
    throw new MigrationFailure({
      connection: this.#connection,
      ...definedFields({ file }),
      request,
      status: response.status,
      reason: `could not ${what}: ${errorDetail(response.body)}`,
    });
  }
}
