import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  type Application,
  bootstrap,
  DefinitionError,
  GetMapping,
  PathVariable,
  RestController,
} from "../../mod.ts";
import { call } from "../helpers.ts";
import { assertValidOpenApi } from "./openapi_validator.ts";

@RestController()
class HelloController {
  @GetMapping("/hello/{name}", PathVariable("name"))
  hello(name: string) {
    return { hello: name };
  }
}

@RestController()
class CatchAllController {
  // A variable segment that would match `/docs` if the docs page were added after it.
  @GetMapping("/{page}", PathVariable("page"))
  page(page: string) {
    return `page ${page}`;
  }
}

function app(openapi: Parameters<typeof bootstrap>[0] = {}): Promise<Application> {
  return bootstrap({ controllers: [HelloController], ...openapi });
}

describe("serving the OpenAPI document and the docs page", () => {
  it("serves nothing unless asked, and app.openapi() still builds the document", async () => {
    const plain = await app();
    assert.equal((await call(plain, "GET", "/openapi.json")).status, 404);
    assert.equal((await call(plain, "GET", "/docs")).status, 404);
    const doc = await plain.openapi();
    await assertValidOpenApi(doc);
    assert.deepEqual(Object.keys(doc.paths), ["/hello/{name}"]);
  });

  it("serves the document at /openapi.json: the same as app.openapi(), without its own routes", async () => {
    const served = await app({ openapi: true });
    const res = await call(served, "GET", "/openapi.json");
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("content-type"), "application/json");
    assert.equal(res.headers.get("x-content-type-options"), "nosniff");
    const body = await res.json();
    assert.deepEqual(body, JSON.parse(JSON.stringify(await served.openapi())));
    assert.deepEqual(Object.keys(body.paths), ["/hello/{name}"]);
  });

  it("serves the Swagger UI page and its files from the app, under a policy of 'self'", async () => {
    const served = await app({ openapi: { title: `<script>alert("x")</script>` } });
    const page = await call(served, "GET", "/docs");
    assert.equal(page.status, 200);
    assert.equal(page.headers.get("content-type"), "text/html; charset=utf-8");
    const policy = page.headers.get("content-security-policy") ?? "";
    assert.match(policy, /script-src 'self';/);
    assert.match(policy, /connect-src 'self';/);
    const html = await page.text();
    assert.ok(!html.includes("<script>alert"), "the title is escaped");
    assert.ok(html.includes("&#60;script&#62;alert(&#34;x&#34;)"));
    // Every file the page loads is one of the app's own paths: no CDN.
    const sources = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
    // An empty icon, so the browser asks nothing of the app's origin for one.
    assert.equal(sources.shift(), "data:,");
    assert.deepEqual(sources, [
      "/docs/swagger-ui.css",
      "/docs/swagger-ui-bundle.js",
      "/docs/swagger-initializer.js",
    ]);
    for (const source of sources) {
      const res = await call(served, "GET", source);
      assert.equal(res.status, 200, source);
      assert.ok((await res.arrayBuffer()).byteLength > 0);
    }
    const init = await (await call(served, "GET", "/docs/swagger-initializer.js")).text();
    assert.match(init, /"url":"\/openapi\.json"/);
    assert.match(init, /"validatorUrl":null/);
    const bundle = await call(served, "GET", "/docs/swagger-ui-bundle.js");
    assert.equal(bundle.headers.get("content-type"), "text/javascript; charset=utf-8");
    await bundle.body?.cancel();
  });

  it("answers 304 to a request that has the file already, and HEAD without a body", async () => {
    const served = await app({ openapi: true });
    const first = await call(served, "GET", "/docs/swagger-ui.css");
    const etag = first.headers.get("etag");
    assert.match(etag ?? "", /^"[0-9a-f]{32}"$/);
    assert.equal(first.headers.get("cache-control"), "no-cache");
    await first.body?.cancel();
    const again = await call(served, "GET", "/docs/swagger-ui.css", {
      headers: { "if-none-match": `"other", ${etag}` },
    });
    assert.equal(again.status, 304);
    assert.equal(await again.text(), "");
    // Compared weakly (RFC 9110 13.1.2), as a proxy that compresses marks the tag weak, and `*`.
    for (const match of [`W/${etag}`, "*"]) {
      const weak = await call(served, "GET", "/docs/swagger-ui.css", {
        headers: { "if-none-match": match },
      });
      assert.equal(weak.status, 304, match);
    }
    const stale = await call(served, "GET", "/docs/swagger-ui.css", {
      headers: { "if-none-match": `W/"nothing"` },
    });
    assert.equal(stale.status, 200);
    await stale.body?.cancel();
    const head = await call(served, "HEAD", "/docs");
    assert.equal(head.status, 200);
    assert.equal(await head.text(), "");
  });

  it("treats its paths like any route: 405 with Allow, OPTIONS, no file outside the fixed ones", async () => {
    const served = await app({ openapi: true });
    const post = await call(served, "POST", "/openapi.json");
    assert.equal(post.status, 405);
    assert.equal(post.headers.get("allow"), "GET, HEAD, OPTIONS");
    await post.body?.cancel();
    const options = await call(served, "OPTIONS", "/docs");
    assert.equal(options.status, 204);
    for (
      const path of [
        "/docs/package.json",
        "/docs/../package.json",
        "/docs/%2e%2e/package.json",
        "/docs/swagger-ui-bundle.js.map",
        "/docs/index.html",
        "/docs/absolute-path.js",
      ]
    ) {
      const res = await call(served, "GET", path);
      assert.equal(res.status, 404, path);
      await res.body?.cancel();
    }
  });

  it("serves at the configured paths, or only the document", async () => {
    const custom = await app({ openapi: { path: "/api/spec.json", docs: "/api/docs/" } });
    assert.equal((await call(custom, "GET", "/api/spec.json")).status, 200);
    const page = await (await call(custom, "GET", "/api/docs")).text();
    assert.ok(page.includes(`src="/api/docs/swagger-ui-bundle.js"`));
    const init = await (await call(custom, "GET", "/api/docs/swagger-initializer.js")).text();
    assert.match(init, /"url":"\/api\/spec\.json"/);
    assert.equal((await call(custom, "GET", "/openapi.json")).status, 404);

    const documentOnly = await app({ openapi: { docs: false } });
    assert.equal((await call(documentOnly, "GET", "/openapi.json")).status, 200);
    assert.equal((await call(documentOnly, "GET", "/docs")).status, 404);
  });

  it("reads app.openapi from the configuration; the bootstrap option wins", async () => {
    const config = { app: { openapi: { title: "From the file", version: "2", docs: false } } };
    const fromFile = await app({ config });
    assert.equal((await call(fromFile, "GET", "/openapi.json")).status, 200);
    assert.equal((await call(fromFile, "GET", "/docs")).status, 404);
    assert.deepEqual((await fromFile.openapi()).info, { title: "From the file", version: "2" });

    const overridden = await app({ config, openapi: { title: "From code", docs: "/docs" } });
    assert.equal((await call(overridden, "GET", "/docs")).status, 200);
    assert.equal((await overridden.openapi()).info.title, "From code");

    const off = await app({ config, openapi: false });
    assert.equal((await call(off, "GET", "/openapi.json")).status, 404);
    const disabled = await app({ config: { app: { openapi: { enabled: false } } } });
    assert.equal((await call(disabled, "GET", "/openapi.json")).status, 404);
  });

  it("wins over a controller's variable route, and refuses a controller's route on its path", async () => {
    const served = await bootstrap({ controllers: [CatchAllController], openapi: true });
    assert.equal(
      (await call(served, "GET", "/docs")).headers.get("content-type"),
      "text/html; charset=utf-8",
    );
    assert.equal(await (await call(served, "GET", "/other")).text(), "page other");

    @RestController()
    class DocsController {
      @GetMapping("/openapi.json")
      mine() {
        return {};
      }
    }
    await assert.rejects(
      bootstrap({ controllers: [DocsController], openapi: true }),
      (error: unknown) =>
        error instanceof DefinitionError &&
        error.message.includes("Two handlers for GET /openapi.json") &&
        error.message.includes("DocsController.mine") &&
        error.message.includes("app.openapi.path"),
    );
  });
});
