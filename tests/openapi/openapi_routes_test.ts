import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import {
  type Application,
  bootstrap,
  ConfigError,
  DefinitionError,
  GetMapping,
  PathVariable,
  RestController,
} from "../../mod.ts";
import { loadConfig } from "../../config.ts";
import { openApi, openApiDocument, type OpenApiOptions } from "../../openapi.ts";
import { call } from "../helpers.ts";
import { assertValidOpenApi } from "./openapi_validator.ts";
import { tempDir } from "../temp_dir.ts";

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
  it("serves nothing unless asked, and openApiDocument(app) still builds the document", async () => {
    const plain = await app();
    assert.equal((await call(plain, "GET", "/openapi.json")).status, 404);
    assert.equal((await call(plain, "GET", "/docs")).status, 404);
    const doc = await openApiDocument(plain);
    await assertValidOpenApi(doc);
    assert.deepEqual(Object.keys(doc.paths), ["/hello/{name}"]);
  });

  it("serves the document at /openapi.json: the same as openApiDocument(app), without its own routes", async () => {
    const served = await app({ openapi: openApi() });
    const res = await call(served, "GET", "/openapi.json");
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("content-type"), "application/json");
    assert.equal(res.headers.get("x-content-type-options"), "nosniff");
    const body = await res.json();
    assert.deepEqual(body, JSON.parse(JSON.stringify(await openApiDocument(served))));
    assert.deepEqual(Object.keys(body.paths), ["/hello/{name}"]);
  });

  it("serves the Swagger UI page and its files from the app, under a policy of 'self'", async () => {
    const served = await app({ openapi: openApi({ title: `<script>alert("x")</script>` }) });
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
    const served = await app({ openapi: openApi() });
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
    const served = await app({ openapi: openApi() });
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
    const custom = await app({ openapi: openApi({ path: "/api/spec.json", docs: "/api/docs/" }) });
    assert.equal((await call(custom, "GET", "/api/spec.json")).status, 200);
    const page = await (await call(custom, "GET", "/api/docs")).text();
    assert.ok(page.includes(`src="/api/docs/swagger-ui-bundle.js"`));
    const init = await (await call(custom, "GET", "/api/docs/swagger-initializer.js")).text();
    assert.match(init, /"url":"\/api\/spec\.json"/);
    assert.equal((await call(custom, "GET", "/openapi.json")).status, 404);

    const documentOnly = await app({ openapi: openApi({ docs: false }) });
    assert.equal((await call(documentOnly, "GET", "/openapi.json")).status, 200);
    assert.equal((await call(documentOnly, "GET", "/docs")).status, 404);
  });

  it("reads app.openapi from the configuration; the openApi() options win", async () => {
    const config = { app: { openapi: { title: "From the file", version: "2", docs: false } } };
    const fromFile = await app({ config, openapi: openApi() });
    assert.equal((await call(fromFile, "GET", "/openapi.json")).status, 200);
    assert.equal((await call(fromFile, "GET", "/docs")).status, 404);
    assert.deepEqual((await openApiDocument(fromFile)).info, {
      title: "From the file",
      version: "2",
    });

    const overridden = await app({
      config,
      openapi: openApi({ title: "From code", docs: "/docs" }),
    });
    assert.equal((await call(overridden, "GET", "/docs")).status, 200);
    assert.equal((await openApiDocument(overridden)).info.title, "From code");

    const off = await app({ config, openapi: false });
    assert.equal((await call(off, "GET", "/openapi.json")).status, 404);
    const disabled = await app({ config: { app: { openapi: { enabled: false } } } });
    assert.equal((await call(disabled, "GET", "/openapi.json")).status, 404);
  });

  it("refuses app.openapi keys that turn serving on without openApi(), naming the key and the import", async () => {
    const refused = (where: string) => (error: unknown) =>
      error instanceof ConfigError &&
      error.message.startsWith(`${where}: serving OpenAPI needs the generator`) &&
      error.message.includes(`import { openApi } from "@thaw/thaw/openapi"`) &&
      error.message.includes("bootstrap({ openapi: openApi() })");
    const on: [unknown, Record<string, string>][] = [
      [true, {}],
      ["true", {}],
      [{ title: "From the file" }, {}],
      [{ docs: false }, {}],
      [{ enabled: true }, {}],
      [{ enabled: "${OPENAPI:false}" }, { OPENAPI: "true" }],
      [{ enabled: "${OPENAPI:true}" }, {}],
    ];
    for (const [keys, env] of on) {
      await assert.rejects(
        app({ config: { app: { openapi: keys } }, env }),
        refused("config: app.openapi"),
        JSON.stringify(keys),
      );
    }
    // A file's key is named with its line.
    {
      await using dir = await tempDir("thaw-openapi-");
      const file = join(dir.path, "application.yml");
      await writeFile(file, "server:\n  port: 8080\napp:\n  openapi:\n    title: From the file\n");
      const config = await loadConfig(file, { env: {} });
      await assert.rejects(app({ config }), refused(`${file}:4: app.openapi`));
      // With openApi() the file's keys apply.
      const served = await app({ config, openapi: openApi() });
      assert.equal((await call(served, "GET", "/openapi.json")).status, 200);
      assert.equal((await openApiDocument(served)).info.title, "From the file");
    }

    // Keys that serve nothing need no generator; nor do keys that openapi: false turns off.
    const off: [unknown, Record<string, string>, number][] = [
      // What openApi() then serves: a file's `enabled: false` holds; a null key is no key.
      [false, {}, 404],
      ["false", {}, 404],
      [{ enabled: false, title: "Off" }, {}, 404],
      [{ enabled: "${OPENAPI:true}" }, { OPENAPI: "false" }, 404],
      [null, {}, 200],
    ];
    for (const [keys, env, withOpenApi] of off) {
      const quiet = await app({ config: { app: { openapi: keys } }, env });
      assert.equal((await call(quiet, "GET", "/openapi.json")).status, 404, JSON.stringify(keys));
      const given = await app({ config: { app: { openapi: keys } }, env, openapi: openApi() });
      const status = (await call(given, "GET", "/openapi.json")).status;
      assert.equal(status, withOpenApi, JSON.stringify(keys));
    }
    const config = { app: { openapi: { title: "From the file", version: "2" } } };
    const turnedOff = await app({ config, openapi: false });
    assert.equal((await call(turnedOff, "GET", "/openapi.json")).status, 404);
    assert.equal((await call(turnedOff, "GET", "/docs")).status, 404);
    // The document is still built from the keys.
    assert.deepEqual((await openApiDocument(turnedOff)).info, {
      title: "From the file",
      version: "2",
    });
  });

  it("refuses at startup what openApi() did not make, and openApi() options that are not an object", async () => {
    const notMade: [unknown, string][] = [
      [true, "got true"],
      [{}, "got an object"],
      [{ docs: false }, "got an object"],
      [null, "got null"],
      ["true", `got "true"`],
    ];
    for (const [openapi, got] of notMade) {
      await assert.rejects(
        app({ openapi: openapi as false }),
        (error: unknown) =>
          error instanceof TypeError &&
          error.message.startsWith("bootstrap({ openapi }) takes what openApi() returns") &&
          error.message.includes(`import { openApi } from "@thaw/thaw/openapi"`) &&
          error.message.endsWith(got),
        JSON.stringify(openapi),
      );
    }
    // Refused by openApi() itself, before bootstrap: `openApi(false)` must not serve nothing
    // without a word.
    const wrong: [unknown, string][] = [
      [null, "null"],
      [true, "true"],
      [false, "false"],
      ["false", `"false"`],
      [0, "0"],
      ["", `""`],
      [[], "an array"],
    ];
    for (const [options, got] of wrong) {
      assert.throws(
        () => openApi(options as OpenApiOptions),
        (error: unknown) =>
          error instanceof ConfigError &&
          error.message ===
            `openApi(): the options must be an object, got ${got}; to serve nothing, pass ` +
              "bootstrap({ openapi: false })",
        got,
      );
    }
    // The value of another copy of the package: the same shape, not this copy's.
    await assert.rejects(
      app({ openapi: { feature: "openapi" } as never }),
      (error: unknown) =>
        error instanceof TypeError && error.message.includes("comes from another copy"),
    );
    // openApi passed without calling it.
    await assert.rejects(
      app({ openapi: openApi as never }),
      (error: unknown) =>
        error instanceof TypeError &&
        error.message.endsWith("got the function openApi: call it, openApi()"),
    );
    // A key openApi() does not know is refused, as the file's are, not ignored.
    assert.throws(
      () => openApi({ titel: "Users" } as OpenApiOptions),
      (error: unknown) =>
        error instanceof ConfigError &&
        error.message.startsWith(
          'openApi(): unknown option "titel"; the options are enabled, path',
        ),
    );
    // A bad option is named as openApi()'s.
    await assert.rejects(
      app({ openapi: openApi({ path: "/{id}" }) }),
      (error: unknown) =>
        error instanceof ConfigError &&
        error.message.startsWith("openApi() option path must be a fixed path like /docs"),
    );
  });

  it("wins over a controller's variable route, and refuses a controller's route on its path", async () => {
    const served = await bootstrap({ controllers: [CatchAllController], openapi: openApi() });
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
      bootstrap({ controllers: [DocsController], openapi: openApi() }),
      (error: unknown) =>
        error instanceof DefinitionError &&
        error.message.includes("Two handlers for GET /openapi.json") &&
        error.message.includes("DocsController.mine") &&
        error.message.includes("app.openapi.path"),
    );
  });
});
