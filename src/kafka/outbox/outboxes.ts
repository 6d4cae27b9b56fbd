// The outboxes of an app's datasources, as `kafka()` wires them: the template's port (a record
// sent inside a transaction goes to the outbox of that transaction's datasource, made at its first
// write), and a relay on each datasource whose outbox table exists, started once the beans are
// made and stopped before they are. Loaded only when `kafka.outbox.enabled` is not false.
import type { ApplicationContext } from "../../context/application_context.ts";
import { SqlClient } from "../../data/sql_client.ts";
import { innermostTransaction } from "../../data/transaction_scope.ts";
import type { ContextLogger } from "../../context/class_record.ts";
import type { KafkaTelemetry } from "../kafka_telemetry.ts";
import type { OutboxPort } from "../kafka_template.ts";
import type { RecordSender } from "../outgoing_record.ts";
import { isMissingTable } from "./outbox_table.ts";
import { Outbox, type OutboxOptions } from "./outbox.ts";

/** The outboxes of one app. */
export class Outboxes {
  readonly #context: ApplicationContext;
  readonly #sender: RecordSender;
  readonly #options: OutboxOptions;
  readonly #logger: ContextLogger;
  readonly #byName = new Map<string, Outbox>();
  readonly #relays: Outbox[] = [];
  readonly #gauges: (() => void)[] = [];

  constructor(
    context: ApplicationContext,
    sender: RecordSender,
    options: OutboxOptions,
    logger: ContextLogger,
  ) {
    this.#context = context;
    this.#sender = sender;
    this.#options = options;
    this.#logger = logger;
  }

  /**
   * The template's port: inside a read-write transaction, the record goes to the outbox of its
   * datasource; outside one (or in a read-only one, which writes nothing to tie it to), `false`.
   */
  readonly port: OutboxPort = async (record) => {
    const transaction = innermostTransaction();
    if (transaction === undefined || transaction.readOnly) return false;
    await this.#of(transaction.pool.name).write(transaction, record);
    return true;
  };

  /**
   * Starts a relay on each datasource of the app whose outbox table exists (what an earlier
   * process committed and never sent goes first); a datasource without the table has none, and a
   * send inside one of its transactions fails, naming the table.
   */
  async start(telemetry: KafkaTelemetry | undefined): Promise<void> {
    const clients = this.#context.beans().map((bean) => bean.instance)
      .filter((instance): instance is SqlClient => instance instanceof SqlClient);
    for (const client of clients) {
      const outbox = this.#of(client.name);
      try {
        await outbox.start();
      } catch (error) {
        if (isMissingTable(error) || isMissingTable((error as Error).cause)) continue;
        throw error;
      }
      this.#relays.push(outbox);
      const stop = telemetry?.observeBacklog(() => outbox.backlog(), {
        "db.client.connection.pool.name": client.name,
      });
      if (stop !== undefined) this.#gauges.push(stop);
    }
  }

  /**
   * Stops the relays: no batch starts, a batch in flight gets `timeoutMs` (what it did not mark
   * is sent by the next relay). Resolves once each ended or had its time.
   */
  async close(timeoutMs: number): Promise<void> {
    for (const stop of this.#gauges.splice(0)) stop();
    const ended = await Promise.all(this.#relays.splice(0).map((o) => o.close(timeoutMs)));
    const left = ended.filter((e) => !e).length;
    if (left > 0) {
      (this.#logger.warn ?? this.#logger.error).call(
        this.#logger,
        `${left} outbox relay${left === 1 ? "" : "s"} still sending after ${timeoutMs} ms at ` +
          "close: the rows it did not mark sent go again with the next relay",
      );
    }
  }

  #of(name: string): Outbox {
    let outbox = this.#byName.get(name);
    if (outbox === undefined) {
      outbox = new Outbox(this.#context.getBean<SqlClient>(name), this.#sender, {
        ...this.#options,
        logger: this.#logger,
      });
      this.#byName.set(name, outbox);
    }
    return outbox;
  }
}
