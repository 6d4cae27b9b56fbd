// kafka() with data(), as an app uses them: Thaw's outbox migration applied at start from a file
// of the app's migrations, a send inside @Transactional written to the outbox and relayed once
// the transaction committed (never when it rolled back), a send outside one acknowledged at once,
// a datasource without the table named, and kafka.outbox.enabled: false sending at once.
import assert from "node:assert/strict";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, it } from "node:test";
import { type Application, Autowired, bootstrap, Service } from "../../../mod.ts";
import { data, SqlClient, Transactional } from "../../../data.ts";
import { kafka, KafkaTemplate, type SendResult } from "../../../kafka.ts";
import { KINDS } from "../../migrate/sql/databases.ts";
import { datasourceEntries } from "../../sql/pools.ts";
import { createTopic, KAFKA_BOOTSTRAP, readTopic, uniqueName } from "../broker.ts";
import { topicSize, waitFor } from "./outbox_support.ts";
import { Outboxes } from "../../../src/kafka/outbox/outboxes.ts";
import { ApplicationContext } from "../../../src/context/application_context.ts";

const database = datasourceEntries();
const kafkaEntry = new URL("../../../kafka.ts", import.meta.url).href;

@Service()
class Orders {
  @Autowired(SqlClient)
  sql!: SqlClient;
  @Autowired(KafkaTemplate)
  kafka!: KafkaTemplate;
  topic = "";

  // A read-only transaction writes nothing a record could be tied to.
  @Transactional({ readOnly: true })
  async notify(id: string): Promise<SendResult> {
    await this.sql.query`SELECT id FROM orders`;
    return await this.kafka.send(this.topic, { id }, { key: id });
  }

  @Transactional()
  async place(id: string, fail: boolean): Promise<SendResult> {
    await this.sql.execute`INSERT INTO orders (id) VALUES (${id})`;
    const sent = await this.kafka.send(this.topic, { id }, { key: id });
    if (fail) throw new Error(`refused ${id}`);
    return sent;
  }
}

describe("Outboxes", () => {
  it("declines a record sent outside a transaction: it goes to the broker at once", async () => {
    const sender = { send: () => Promise.reject(new Error("not this way")) };
    const outboxes = new Outboxes(new ApplicationContext(), sender, {}, console);
    assert.equal(
      await outboxes.port({
        topic: "t",
        key: undefined,
        value: undefined,
        headers: [],
        partition: undefined,
      }),
      false,
    );
  });
});

for (const kind of KINDS) {
  describe(`kafka() with data() on ${kind}`, () => {
    async function app(
      options: { outboxTable?: boolean; outbox?: Record<string, unknown> } = {},
    ): Promise<{ app: Application; orders: Orders; topic: string }> {
      const main = await database(kind, "main", { migrations: { enabled: true } });
      const root = join(main.dir, "migrations");
      await mkdir(join(root, "main"), { recursive: true });
      await writeFile(
        join(root, "main", "V1__orders.sql"),
        "CREATE TABLE orders (id VARCHAR(20));\n",
      );
      if (options.outboxTable !== false) {
        await writeFile(
          join(root, "main", "V2__thaw_outbox.ts"),
          `import { outboxMigration } from ${JSON.stringify(kafkaEntry)};\n` +
            "export default outboxMigration();\n",
        );
      }
      const topic = uniqueName("outboxes");
      await createTopic(topic, 2);
      const application = await bootstrap({
        config: {
          datasource: [main.entry],
          kafka: {
            "bootstrap-servers": KAFKA_BOOTSTRAP,
            ...(options.outbox === undefined ? {} : { outbox: options.outbox }),
          },
        },
        components: [Orders],
        data: data({ migrate: pathToFileURL(`${root}/`) }),
        kafka: kafka(),
      });
      const orders = application.getBean(Orders);
      orders.topic = topic;
      return { app: application, orders, topic };
    }

    it("relays a committed transaction's records, and none of a rolled-back one", async () => {
      const { app: application, orders, topic } = await app();
      try {
        const results = [];
        for (let i = 0; i < 6; i++) {
          results.push(await orders.place(`o${i}`, false));
          await assert.rejects(orders.place(`x${i}`, true), /refused x/);
        }
        assert.ok(results.every((r) => r.outboxed));
        const records = await readTopic(topic, 6);
        assert.deepEqual(
          records.map((r) => r.key).sort(),
          ["o0", "o1", "o2", "o3", "o4", "o5"],
        );
        const sql = application.getBean(SqlClient);
        await waitFor("every row marked sent", async () => {
          const [row] = await sql.query<{ n: number | string }>`
            SELECT COUNT(*) AS n FROM thaw_outbox WHERE sent_at IS NULL`;
          return Number(row.n) === 0;
        });
        // Nothing of the rolled-back calls went, however long one looks.
        assert.equal(await topicSize(topic, 2), 6);
      } finally {
        await application.close();
      }
    });

    it("sends at once outside a transaction, with the offset", async () => {
      const { app: application, topic } = await app();
      try {
        const sent = await application.getBean(KafkaTemplate).send(topic, { id: 1 }, { key: "k" });
        assert.equal(sent.outboxed, false);
        assert.equal((await readTopic(topic, 1))[0].key, "k");
      } finally {
        await application.close();
      }
    });

    it("fails a transactional send to a datasource without the outbox table, naming it", async () => {
      const { app: application, orders } = await app({ outboxTable: false });
      try {
        await assert.rejects(
          orders.place("o1", false),
          /datasource "main".*thaw_outbox/s,
        );
        const sql = application.getBean(SqlClient);
        const rows = await sql.query`SELECT id FROM orders`;
        assert.deepEqual(rows, []);
      } finally {
        await application.close();
      }
    });

    it("sends at once inside a read-only transaction, with the offset", async () => {
      const { app: application, orders, topic } = await app();
      try {
        const sent = await orders.notify("n1");
        assert.equal(sent.outboxed, false);
        assert.equal((await readTopic(topic, 1))[0].key, "n1");
        const [row] = await application.getBean(SqlClient).query<{ n: number | string }>`
          SELECT COUNT(*) AS n FROM thaw_outbox`;
        assert.equal(Number(row.n), 0);
      } finally {
        await application.close();
      }
    });

    it("sends at once inside a transaction with kafka.outbox.enabled: false", async () => {
      const { app: application, orders, topic } = await app({
        outboxTable: false,
        outbox: { enabled: false },
      });
      try {
        const sent = await orders.place("o1", false);
        assert.equal(sent.outboxed, false);
        assert.equal((await readTopic(topic, 1))[0].key, "o1");
      } finally {
        await application.close();
      }
    });
  });
}
