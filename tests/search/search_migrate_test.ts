// search({ migrate }) end to end on the real node (tools/opensearch.sh start): the runner's core
// applies each connection's files before any bean is made, the app then reads and writes through
// the alias the files made; a failing file stops bootstrap naming the connection and the file;
// with drift, a hand-edited template is found and applied again.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { type Application, Autowired, bootstrap, PostConstruct, Service } from "../../mod.ts";
import { search, SearchClient } from "../../search.ts";
import { MigrationRunError } from "../../migrate.ts";
import { OPENSEARCH_URL, os } from "../migrate/search/cluster.ts";
import { tempDir } from "../temp_dir.ts";
import { startAliasWriter, whileWriting } from "../migrate/search/alias_writer.ts";

const id = () => `t${crypto.randomUUID().slice(0, 8)}`;

interface Setup {
  readonly name: string;
  readonly root: URL;
  readonly entry: Record<string, unknown>;
}

// A connection named `name`, its records in an index of its own, and its files under `dir`.
async function connection(
  dir: string,
  files: Record<string, unknown>,
  name: string = id(),
): Promise<Setup> {
  for (const [file, body] of Object.entries(files)) {
    const path = join(dir, name, file);
    await mkdir(join(path, ".."), { recursive: true });
    await writeFile(path, typeof body === "string" ? body : JSON.stringify(body));
  }
  return {
    name,
    root: pathToFileURL(`${dir}/`),
    entry: {
      name,
      hosts: OPENSEARCH_URL,
      migrations: { enabled: true, index: `fm_${name}` },
    },
  };
}

async function cleanUp(...patterns: string[]): Promise<void> {
  for (const p of patterns) await os("DELETE", `/${p}?ignore_unavailable=true`);
}

describe("bootstrap({ search: search({ migrate }) })", () => {
  it("migrates a fresh node before the beans, which then write and read through the alias", async () => {
    await using dir = await tempDir();
    const suffix = id();
    const setup = await connection(dir.path, {
      [`1.0/products_${suffix}-index.json`]: {
        settings: { number_of_shards: 1, number_of_replicas: 0 },
        mappings: { properties: { title: { type: "text" } } },
        aliases: { [`catalog_${suffix}`]: {} },
      },
    });
    const alias = `catalog_${suffix}`;
    let mapped: unknown;
    @Service()
    class Catalog {
      @Autowired(SearchClient)
      client!: SearchClient;
      @PostConstruct()
      async read(): Promise<void> {
        // The index is there when the first bean starts.
        mapped = (await this.client.indices.getMapping({ index: alias })).body;
      }
    }
    const lines: string[] = [];
    let app: Application | undefined;
    try {
      app = await bootstrap({
        config: { search: [setup.entry] },
        components: [Catalog],
        search: search({ migrate: setup.root, onProgress: (line) => lines.push(line) }),
      });
      assert.ok(
        lines.some((l) => l.includes(`apply 1.0/products_${suffix}-index.json`)),
        lines.join("\n"),
      );
      assert.deepEqual(Object.keys(mapped as object), [`products_${suffix}`]);
      const client = app.getBean(Catalog).client;
      await client.index({ index: alias, id: "1", body: { title: "kettle" }, refresh: true });
      const found = await client.search({ index: alias, q: "title:kettle" });
      assert.equal(found.body.hits.hits[0]._index, `products_${suffix}`);
      await app.close();
      // A second start finds nothing to do.
      lines.length = 0;
      app = await bootstrap({
        config: { search: [setup.entry] },
        search: search({ migrate: setup.root, onProgress: (line) => lines.push(line) }),
      });
      assert.ok(!lines.some((l) => / apply /.test(l)), lines.join("\n"));
    } finally {
      await app?.close();
      await cleanUp(`products_${suffix}`, `fm_${setup.name}`);
    }
  });

  it("stops bootstrap on a failing file, naming the connection and the file, before any bean", async () => {
    await using dir = await tempDir();
    const suffix = id();
    const setup = await connection(dir.path, {
      [`1.0/broken_${suffix}-index.json`]: {
        mappings: { properties: { title: { type: "no-such-type" } } },
      },
    });
    let made = false;
    @Service()
    class Reader {
      @PostConstruct()
      start(): void {
        made = true;
      }
    }
    try {
      const error = await bootstrap({
        config: { search: [setup.entry] },
        components: [Reader],
        search: search({ migrate: setup.root }),
      }).then(() => assert.fail("bootstrap started"), (e: Error) => e);
      assert.ok(error instanceof MigrationRunError, String(error));
      assert.match(error.message, new RegExp(setup.name));
      assert.match(error.message, new RegExp(`broken_${suffix}-index\\.json`));
      assert.equal(made, false, "a bean was made after the migrations failed");
    } finally {
      await cleanUp(`broken_${suffix}`, `fm_${setup.name}`);
    }
  });

  it("with drift, applies again a template edited by hand on the cluster", async () => {
    await using dir = await tempDir();
    const suffix = id();
    const template = `tpl_${suffix}`;
    const setup = await connection(dir.path, {
      [`1.0/${template}-template.json`]: {
        index_patterns: [`${suffix}_logs-*`],
        template: { settings: { number_of_replicas: 0 } },
      },
    });
    const start = (drift: boolean, lines: string[]) =>
      bootstrap({
        config: { search: [setup.entry] },
        search: search({ migrate: setup.root, drift, onProgress: (l) => lines.push(l) }),
      });
    try {
      await (await start(false, [])).close();
      const edited = await os("PUT", `/_index_template/${template}`, {
        index_patterns: [`${suffix}_logs-*`],
        template: { settings: { number_of_replicas: 2 } },
      });
      assert.equal(edited.status, 200);
      // Without drift the applied file is not looked at again.
      const quiet: string[] = [];
      await (await start(false, quiet)).close();
      assert.ok(!quiet.some((l) => / apply /.test(l)), quiet.join("\n"));
      const lines: string[] = [];
      await (await start(true, lines)).close();
      assert.ok(
        lines.some((l) => l.includes(`template ${template} had drifted`)),
        lines.join("\n"),
      );
      const now = await os("GET", `/_index_template/${template}`);
      assert.equal(
        now.body.index_templates[0].index_template.template.settings.index.number_of_replicas,
        "0",
      );
    } finally {
      await os("DELETE", `/_index_template/${template}`);
      await cleanUp(`fm_${setup.name}`);
    }
  });

  it("a reindex at the next start moves the alias under the running app's writes, losing none", async () => {
    await using first = await tempDir();
    await using second = await tempDir();
    const suffix = id();
    const alias = `items_${suffix}`;
    const index = {
      [`1.0/items_${suffix}_v1-index.json`]: {
        settings: { number_of_shards: 1, number_of_replicas: 0 },
        mappings: { properties: { seq: { type: "long" }, price: { type: "keyword" } } },
        aliases: { [alias]: {} },
      },
    };
    const old = await connection(first.path, index);
    // The next version of the app: the same connection, and a reindex that changes a mapping.
    const next = await connection(second.path, {
      ...index,
      [`1.1/${alias}-reindex.json`]: {
        alias,
        index: `items_${suffix}_v2`,
        settings: { number_of_shards: 1, number_of_replicas: 0 },
        mappings: { properties: { seq: { type: "long" }, price: { type: "double" } } },
      },
    }, old.name);
    const running = await bootstrap({
      config: { search: [old.entry] },
      search: search({ migrate: old.root }),
    });
    let deployed: Application | undefined;
    try {
      const client = running.getBean(SearchClient);
      const seeded = 200;
      await client.bulk({
        refresh: true,
        body: Array.from({ length: seeded }, (_, i) => [
          { index: { _index: alias, _id: `s${i}` } },
          { seq: i, price: "1.5" },
        ]).flat(),
      });
      // The running app writes through the alias with its bean, retrying what the block refuses.
      const call = async (method: string, path: string, body?: unknown) => {
        const r = await client.transport.request(
          {
            method,
            path,
            ...(body === undefined ? {} : { body: body as Record<string, unknown> }),
          },
          { ignore: [403, 404, 409] },
        );
        return { status: r.statusCode ?? 0, body: r.body as { [key: string]: unknown } };
      };
      const writer = startAliasWriter(call, alias, seeded);
      const lines: string[] = [];
      deployed = await whileWriting(writer, () =>
        bootstrap({
          config: { search: [next.entry] },
          search: search({ migrate: next.root, onProgress: (l) => lines.push(l) }),
        }));
      assert.ok(
        lines.some((l) => l.includes(`alias ${alias} moved to items_${suffix}_v2`)),
        lines.join("\n"),
      );
      await writer.checkMoved(`items_${suffix}_v2`);
      // The new app reads through the alias what the old one wrote.
      const found = await deployed.getBean(SearchClient).count({ index: alias });
      assert.equal(found.body.count, seeded + writer.added);
    } finally {
      await deployed?.close();
      await running.close();
      await cleanUp(`items_${suffix}_v1`, `items_${suffix}_v2`, `fm_${old.name}`);
    }
  });
});
