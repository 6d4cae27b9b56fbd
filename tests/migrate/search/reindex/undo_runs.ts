import process from "node:process";
import { runReindex } from "../../../../src/migrate/search/reindex/reindex.ts";
import { runReindexUndo } from "../../../../src/migrate/search/reindex/reindex_undo.ts";
import type { MovedOff, ReindexOutcome } from "../../../../src/migrate/search/reindex/run_plan.ts";
import type { ReindexContext } from "../../../../src/migrate/search/reindex/reindex_setup.ts";
import type { ReindexSpec } from "../../../../src/migrate/search/plan/search_request.ts";
import { SearchClient } from "../../../../src/migrate/search/http/search_client.ts";
import { distributionOf } from "../../../../src/migrate/search/distribution.ts";
import { runtimeTransport } from "../../../../src/migrate/search/http/transport.ts";
import type { SearchConnection } from "../../../../src/migrate/search/search_connection.ts";

/**
 * A reindex file `V3__people-reindex.json` and its undo `U3__people-reindex.json`, run directly
 * (not through the CLI) on `connection`, as the search target runs them: each run's lines kept.
 */
export class UndoRuns {
  /** Every line the runs said, in order. */
  readonly said: string[] = [];
  readonly #connection: SearchConnection;
  readonly forward: ReindexSpec;
  readonly undo: ReindexSpec;
  /** What the last forward run moved the alias off, as the search target records it. */
  movedOff: MovedOff | undefined;

  constructor(connection: SearchConnection, alias: string, previous: string, made: string) {
    this.#connection = connection;
    this.forward = { alias, index: made, deleteSource: false, unblockSource: false };
    this.undo = { alias, index: previous, deleteSource: false, unblockSource: false };
  }

  /** The context of a run of `file`; `lost` aborted stops it where it is, as a killed runner. */
  async context(file: string, lost = new AbortController().signal): Promise<ReindexContext> {
    const connection = this.#connection;
    const client = new SearchClient(connection, await runtimeTransport(connection));
    // As the search target does: the swap's timeout is named after the cluster (Elasticsearch's
    // master_timeout, OpenSearch's cluster_manager_timeout).
    const root = await client.send("GET", "/");
    return {
      client,
      distribution: distributionOf(root.body).name,
      connection: connection.name,
      file: `${connection.name}/${file}`,
      recordsIndex: connection.recordsIndex,
      timeoutMs: connection.timeoutMs,
      lost,
      say: (line) => {
        this.said.push(line);
        // UNDO_TRACE=1 prints each line with its time: where a run spent its blocked window.
        if (process.env.UNDO_TRACE) console.log(new Date().toISOString(), line);
      },
      waitMs: 200,
    };
  }

  /** Runs the reindex file, with `body` (settings, mappings). */
  async runForward(body: Readonly<Record<string, unknown>> = {}): Promise<ReindexOutcome> {
    const outcome = await runReindex(
      this.forward,
      body,
      await this.context("V3__people-reindex.json"),
    );
    if (outcome.result === "reindexed") this.movedOff = outcome.movedOff;
    return outcome;
  }

  /** Runs the undo file; `lost` as {@linkcode UndoRuns.context} says. */
  async runUndo(lost?: AbortSignal): Promise<ReindexOutcome> {
    return await runReindexUndo(
      this.undo,
      this.forward,
      await this.context("U3__people-reindex.json", lost),
      {
        file: "V3__people-reindex.json",
        ...(this.movedOff === undefined ? {} : { movedOff: this.movedOff }),
      },
    );
  }
}
