// The products example's worker (examples/products/worker.ts) on real workerd, bundled as Wrangler
// bundles one under nodejs_compat: its SearchClient bean stores, reads and searches products on
// the real node over workerd's own `fetch`. The index and alias are migrated first from this
// process, as a deploy migrates from a machine.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { type ServedWorker, serveWorker } from "./workerd.ts";
import { OPENSEARCH_URL, os } from "../migrate/search/cluster.ts";
import { productsApp } from "../../examples/products/app.ts";

const WORKER = fileURLToPath(new URL("../../examples/products/worker.ts", import.meta.url));
const records = `products_migrations_${crypto.randomUUID().slice(0, 8)}`;

async function dropAll(): Promise<void> {
  await os("DELETE", `/products-v1,${records}?ignore_unavailable=true`);
}

describe("the products example's worker on workerd", () => {
  let worker: ServedWorker;

  before(async () => {
    process.env.OPENSEARCH_URL = OPENSEARCH_URL;
    process.env.PRODUCTS_MIGRATIONS_INDEX = records;
    await dropAll();
    await (await productsApp()).close();
    worker = await serveWorker(WORKER, "products_worker", {
      nodeBuiltins: true,
      loopbackOutbound: true,
      bindings: { OPENSEARCH_URL },
      readyPath: "/nothing-here",
    });
  });

  after(async () => {
    await worker?.close();
    delete process.env.PRODUCTS_MIGRATIONS_INDEX;
    await dropAll();
  });

  it("stores, reads and searches products on the node over fetch", async () => {
    const put = await fetch(`${worker.origin}/products/7`, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "edge kettle", price: 12.5 }),
    });
    assert.equal(put.status, 200, `${await put.clone().text()}\n${worker.output()}`);
    const got = await fetch(`${worker.origin}/products/7`);
    assert.deepEqual(await got.json(), { id: "7", name: "edge kettle", price: 12.5 });
    const found = await fetch(`${worker.origin}/products?q=kettle`);
    assert.deepEqual(await found.json(), [{ id: "7", name: "edge kettle", price: 12.5 }]);
  });
});
