// deno-lint-ignore-file require-await -- the beans' async methods stand for an app's I/O.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { bootstrap, Cacheable, CacheManager, Service } from "../../mod.ts";
import { memoryCacheUsage } from "../../src/cache/cache_manager.ts";

/** A logger that keeps what it is given. */
function capture() {
  const lines: string[] = [];
  const put = (level: string) => (message: string) => void lines.push(`${level}: ${message}`);
  return { lines, logger: { error: put("error"), warn: put("warn"), info: put("info") } };
}

@Service()
class Echo {
  loads = 0;
  // A method fed request input: each body its own entry, keyed by itself.
  @Cacheable("bodies")
  async echo(body: string): Promise<string> {
    this.loads++;
    return body;
  }
}

@Service()
class Pages {
  // A result shaped by request input: a row put at the index the client asked for.
  @Cacheable("pages")
  async page(at: number): Promise<string[]> {
    const rows: string[] = [];
    rows[at] = "row";
    return rows;
  }
}

describe("the in-memory CacheManager", () => {
  it("bounds each cache in bytes as well as in entries: 200 bodies of 900 KB", async () => {
    const MiB = 1024 * 1024;
    for (
      const [config, bound] of [
        [{}, 64 * MiB],
        [{ thaw: { cache: { bodies: { "max-bytes": 8 * MiB } } } }, 8 * MiB],
        [{ thaw: { cache: { bodies: { "max-bytes": "16777216" } } } }, 16 * MiB],
      ] as const
    ) {
      const app = await bootstrap({ components: [Echo], config });
      const echo = app.getBean(Echo);
      const body = (i: number) => `${i}:`.padEnd(900_000, "x");
      for (let i = 0; i < 200; i++) await echo.echo(body(i));
      const usage = memoryCacheUsage(app.getBean(CacheManager).getCache("bodies"));
      assert.ok(usage !== undefined);
      // A body counts twice, as the value and as its key, 2 bytes a character: 3.6 MB an entry.
      assert.ok(usage.bytes <= bound, `${usage.bytes} bytes kept, over ${bound}`);
      assert.ok(usage.bytes > bound - 2 * 3_600_100, `${usage.bytes} bytes kept of ${bound}`);
      assert.equal(usage.entries, Math.floor(usage.bytes / 3_600_000));
      // The latest bodies are the ones kept.
      const loads = echo.loads;
      await echo.echo(body(199));
      assert.equal(echo.loads, loads);
      await echo.echo(body(0));
      assert.equal(echo.loads, loads + 1);
      await app.close();
    }
  });

  it("keeps no value larger than the bound, and says so once per cache", async () => {
    const { lines, logger } = capture();
    const app = await bootstrap({
      components: [Echo],
      config: { thaw: { cache: { bodies: { "max-bytes": 10_000 } } } },
      logger,
    });
    const echo = app.getBean(Echo);
    await echo.echo("small");
    await echo.echo("y".repeat(6_000));
    await echo.echo("y".repeat(6_000));
    await echo.echo("z".repeat(7_000));
    assert.equal(echo.loads, 4);
    await echo.echo("small");
    assert.equal(echo.loads, 4);
    assert.deepEqual(lines, [
      // Counted until it passes the bound: the key alone does.
      "warn: cache 'bodies': an entry of 12068 bytes or more is larger than its " +
      "thaw.cache.bodies.max-bytes (10000) and is not kept; later ones are not logged",
    ]);
  });

  it("counts a sparse array of 2^32 - 1 slots without walking them", async () => {
    const { lines, logger } = capture();
    const app = await bootstrap({ components: [Pages], config: {}, logger });
    const rows = await app.getBean(Pages).page(2 ** 32 - 2);
    assert.equal(rows.length, 2 ** 32 - 1);
    const usage = memoryCacheUsage(app.getBean(CacheManager).getCache("pages"));
    // 8 bytes a slot: far over the 64 MiB bound, so not kept.
    assert.deepEqual(usage, { entries: 0, bytes: 0 });
    assert.equal(lines.length, 1);
    assert.match(lines[0], /^warn: cache 'pages': an entry of \d+ bytes or more is larger than/);
    await app.close();
  });
});
