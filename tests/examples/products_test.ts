// The products example (examples/products) against the real node: its index and alias migrated
// at start, then its API writes and reads the products through its SearchClient bean.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import process from "node:process";
import type { Application } from "../../mod.ts";
import { productsApp } from "../../examples/products/app.ts";
import { OPENSEARCH_URL, os } from "../migrate/search/cluster.ts";

// Records of their own, so that each run migrates a fresh node; the index and alias are the
// example's own, dropped before and after.
const records = `products_migrations_${crypto.randomUUID().slice(0, 8)}`;

async function dropAll(): Promise<void> {
  await os("DELETE", `/products-v1,${records}?ignore_unavailable=true`);
}

describe("the products example", () => {
  let app: Application;
  const lines: string[] = [];

  before(async () => {
    process.env.OPENSEARCH_URL = OPENSEARCH_URL;
    process.env.PRODUCTS_MIGRATIONS_INDEX = records;
    await dropAll();
    app = await productsApp((line) => lines.push(line));
  });

  after(async () => {
    await app?.close();
    delete process.env.PRODUCTS_MIGRATIONS_INDEX;
    await dropAll();
  });

  it("migrated its index and alias before it served", async () => {
    assert.ok(lines.some((l) => l.includes("apply 1.0/products-v1-index.json")), lines.join("\n"));
    const alias = await os("GET", "/_alias/products");
    assert.deepEqual(Object.keys(alias.body), ["products-v1"]);
  });

  it("stores, reads and searches products through the alias", async () => {
    const put = (id: string, body: unknown) =>
      app.fetch(
        new Request(`http://localhost/products/${id}`, {
          method: "PUT",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(body),
        }),
      );
    assert.equal((await put("1", { name: "red kettle", price: 35 })).status, 200);
    assert.equal((await put("2", { name: "blue teapot", price: 20 })).status, 200);
    const got = await app.fetch(new Request("http://localhost/products/1"));
    assert.deepEqual(await got.json(), { id: "1", name: "red kettle", price: 35 });
    const missing = await app.fetch(new Request("http://localhost/products/9"));
    assert.equal(missing.status, 404);
    const found = await app.fetch(new Request("http://localhost/products?q=kettle"));
    assert.deepEqual(await found.json(), [{ id: "1", name: "red kettle", price: 35 }]);
    const refused = await put("3", { name: "", price: -1 });
    assert.equal(refused.status, 400);
  });
});
