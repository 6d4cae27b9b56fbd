import { VERSION } from "../../version.ts";
import type { Applied, MigrationTarget, PlannedFile } from "../migration_runner.ts";
import { MigrationFailure } from "../migration_failure.ts";
import { applyRequest } from "./apply_request.ts";
import { RecordStore } from "./record_store.ts";
import { SearchClient, SearchTransportError } from "./search_client.ts";
import type { SearchConnection } from "./search_connection.ts";
import { describeHolder, SearchLock } from "./search_lock.ts";
import type { SearchRequest } from "./search_request.ts";
import type { Transport } from "./transport.ts";

/** A planned search migration file: the request it becomes. */
export interface SearchFile extends PlannedFile {
  readonly request: string;
  readonly searchRequest: SearchRequest;
}

/** One search connection for the shared runner: records index, lock document, requests. */
export class SearchTarget implements MigrationTarget<SearchFile> {
  readonly name: string;
  readonly onChange = "reapply" as const;
  readonly #client: SearchClient;
  readonly #store: RecordStore;
  readonly #lock: SearchLock;
  readonly #transport: Transport;

  constructor(
    connection: SearchConnection,
    transport: Transport,
    identity: { host: string; pid: number },
  ) {
    this.name = connection.name;
    this.#transport = transport;
    this.#client = new SearchClient(connection, transport);
    this.#store = new RecordStore(this.#client, connection.recordsIndex, connection.name);
    this.#lock = new SearchLock(this.#client, connection.recordsIndex, connection.name, identity);
  }

  get requests(): number {
    return this.#client.requests;
  }

  async readRecords(): Promise<ReadonlyMap<string, string>> {
    const records = await this.#store.readAll();
    return new Map([...records].map(([path, r]) => [path, r.content_hash]));
  }

  prepare(): Promise<void> {
    return this.#store.ensureIndex();
  }

  lock(timeoutMs: number, onWait: (holder: string) => void): Promise<void> {
    return this.#lock.acquire(timeoutMs, (holder) => onWait(describeHolder(holder)));
  }

  renew(): Promise<void> {
    return this.#lock.renew();
  }

  async release(): Promise<void> {
    // Records first: a runner waiting for the lock reads them as soon as it has it.
    await this.#store.publish();
    await this.#lock.release();
  }

  async forceUnlock(): Promise<string> {
    const holder = await this.#lock.forceRelease();
    return holder ? `removed the lock of ${describeHolder(holder)}` : "no lock to remove";
  }

  async apply(file: SearchFile, executedAt: Date): Promise<Applied> {
    let outcome;
    try {
      outcome = await applyRequest(this.#client, file.searchRequest, {
        connection: this.name,
        file: file.path,
      });
    } catch (error) {
      if (!(error instanceof SearchTransportError)) throw error;
      throw new MigrationFailure(
        { connection: this.name, file: file.path, request: file.request, reason: error.message },
        { cause: error },
      );
    }
    const ms = Date.now() - executedAt.getTime();
    await this.#store.write({
      migration_path: file.path,
      connection: this.name,
      content_hash: file.hash,
      executed_at: executedAt.toISOString(),
      execution_ms: ms,
      request: { method: file.searchRequest.method, path: file.searchRequest.path },
      runner_version: VERSION,
    });
    return { ...outcome, ms };
  }

  failure(error: unknown): string | undefined {
    return error instanceof SearchTransportError ? error.message : undefined;
  }

  close(): Promise<void> {
    this.#transport.close();
    return Promise.resolve();
  }
}
