// storage(): a bean per store by name, the primary one by class, the disk's ./data/storage by
// default; the keys refused without it; the `storage` health component; and each operation's
// CLIENT span and metrics through OpenTelemetry's real SDK.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import * as api from "@opentelemetry/api";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { MeterProvider } from "@opentelemetry/sdk-metrics";
import { Autowired, bootstrap, Service } from "../../mod.ts";
import { actuator } from "../../actuator.ts";
import { ObjectStorage, storage, StorageError } from "../../storage.ts";
import { CollectingReader, restoreMeterProviderAfter, valueOf } from "../metric_reader.ts";

restoreMeterProviderAfter();

const management = {
  endpoint: { health: { "show-details": "always" } },
  health: { diskspace: { enabled: false } },
};

describe("storage()", () => {
  let folder = "";
  before(async () => {
    folder = await mkdtemp(join(tmpdir(), "thaw-storage-setup-"));
  });
  after(() => rm(folder, { recursive: true, force: true }));

  it("makes a bean per store, by its name, and the primary one by class", async () => {
    @Service()
    class Reports {
      @Autowired(ObjectStorage)
      main!: ObjectStorage;
      @Autowired("exports")
      exports!: ObjectStorage;
    }
    const app = await bootstrap({
      config: {
        storage: [
          { name: "uploads", url: `file:${join(folder, "uploads")}`, primary: true },
          { name: "exports", url: `file:${join(folder, "exports")}` },
        ],
      },
      components: [Reports],
      storage: storage(),
    });
    try {
      const reports = app.getBean(Reports);
      assert.equal(reports.main.name, "uploads");
      assert.equal(reports.exports.name, "exports");
      assert.equal(app.getBean("uploads"), reports.main);
      await reports.exports.put("a.csv", "a,b");
      assert.equal(await reports.main.head("a.csv"), null);
      assert.equal((await reports.exports.head("a.csv"))?.size, 3);
    } finally {
      await app.close();
    }
  });

  it("is one store on the disk, ./data/storage, named storage, when none is configured", async () => {
    const cwd = process.cwd();
    process.chdir(folder);
    try {
      const app = await bootstrap({ storage: storage() });
      try {
        const files = app.getBean(ObjectStorage);
        assert.deepEqual([files.name, files.kind], ["storage", "file"]);
        await files.put("hello.txt", "hi");
        assert.equal((await files.head("hello.txt"))?.size, 2);
      } finally {
        await app.close();
      }
      const { readFile } = await import("node:fs/promises");
      assert.equal(await readFile(join(folder, "data", "storage", "hello.txt"), "utf8"), "hi");
    } finally {
      process.chdir(cwd);
    }
  });

  it("stops bootstrap when storage: is set and storage() is not given, saying what to import", async () => {
    await assert.rejects(
      bootstrap({ config: { storage: [{ name: "a", url: "file:x" }] } }),
      /storage: these keys configure object storage, which lives in its own entry point: import \{ storage \} from "@thaw\/thaw\/storage"/,
    );
    await assert.rejects(
      bootstrap({ config: { storage: [{ name: "a", url: "ftp://x" }] }, storage: storage() }),
      /storage\[0\]\.url is file:<folder>, s3:\/\/<bucket> or r2:<BINDING>/,
    );
  });

  it("reports every store in the storage health component, DOWN naming the one that fails", async () => {
    const file = join(folder, "not-a-folder");
    const { writeFile } = await import("node:fs/promises");
    await writeFile(file, "x");
    const app = await bootstrap({
      config: {
        management,
        storage: [
          { name: "good", url: `file:${join(folder, "good")}` },
          { name: "bad", url: `file:${file}` },
        ],
      },
      actuator: actuator(),
      storage: storage(),
    });
    try {
      const answer = await app.fetch(new Request("http://x/actuator/health"));
      const body = await answer.json();
      assert.equal(answer.status, 503);
      assert.equal(body.components.storage.status, "DOWN");
      assert.match(
        JSON.stringify(body.components.storage.details),
        /storage \\"bad\\": check: the folder/,
      );
      assert.doesNotMatch(JSON.stringify(body.components.storage.details), /storage \\"good\\"/);
    } finally {
      await app.close();
    }
  });
});

describe("storage() telemetry", () => {
  const exporter = new InMemorySpanExporter();
  let reader: CollectingReader;
  before(() => {
    api.trace.setGlobalTracerProvider(
      new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }),
    );
    api.metrics.disable();
    reader = new CollectingReader();
    api.metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }));
  });
  after(() => {
    api.trace.disable();
    api.metrics.disable();
  });

  it("makes a CLIENT span and a duration point per operation, and counts the bytes", async () => {
    const folder = await mkdtemp(join(tmpdir(), "thaw-storage-telemetry-"));
    const app = await bootstrap({
      config: { storage: [{ name: "files", url: `file:${folder}` }] },
      storage: storage(),
    });
    try {
      const files = app.getBean(ObjectStorage);
      await files.put("a.txt", "hello");
      await files.put("b.txt", new Response("stream!").body as ReadableStream<Uint8Array>);
      assert.equal(await new Response((await files.get("a.txt"))?.body).text(), "hello");
      await assert.rejects(files.put("../x", "x"), StorageError);
      const spans = exporter.getFinishedSpans();
      const puts = spans.filter((span) => span.name === "put files");
      assert.equal(puts.length, 3);
      assert.equal(puts[0]?.kind, api.SpanKind.CLIENT);
      assert.deepEqual(puts[0]?.attributes, {
        "thaw.storage.name": "files",
        "thaw.storage.kind": "file",
        "thaw.storage.operation": "put",
      });
      assert.equal(puts[2]?.attributes["error.type"], "key");
      assert.equal(puts[2]?.status.code, api.SpanStatusCode.ERROR);
      // No key in any attribute: the app's data, and a series per key.
      assert.doesNotMatch(JSON.stringify(spans.map((span) => span.attributes)), /a\.txt/);
      const durations = await reader.points("thaw.storage.operation.duration");
      const put = durations.find((p) =>
        p.attributes["thaw.storage.operation"] === "put" && !p.attributes["error.type"]
      );
      assert.equal((put?.value as { count: number }).count, 2);
      const bytes = await reader.points("thaw.storage.bytes");
      assert.equal(valueOf(bytes, { "thaw.storage.direction": "in" }), 5 + 7);
      assert.equal(valueOf(bytes, { "thaw.storage.direction": "out" }), 5);
    } finally {
      await app.close();
      await rm(folder, { recursive: true, force: true });
    }
  });
});
