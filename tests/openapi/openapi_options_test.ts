import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import fc from "fast-check";
import { ConfigError } from "../../mod.ts";
import type { OpenApiOptions } from "../../openapi.ts";
import { loadConfig } from "../../config.ts";
import { resolveConfig } from "../../src/config/application_config.ts";
import { readSettings } from "../../src/config/thaw_settings.ts";
import { openApiSettings } from "../../src/openapi/openapi_options.ts";
import { propertyOptions } from "../property.ts";
import { tempDir } from "../temp_dir.ts";

/** The settings of a configuration object and an option; a rejected promise for what they refuse. */
const settingsOf = (values: Record<string, unknown>, option?: OpenApiOptions | boolean) =>
  Promise.resolve().then(() =>
    openApiSettings(readSettings(resolveConfig(values, () => undefined)), option)
  );

describe("app.openapi settings", () => {
  it("serves nothing without keys or option, with springdoc's title and version", async () => {
    assert.deepEqual(await settingsOf({}), {
      path: undefined,
      docs: undefined,
      title: "OpenAPI definition",
      version: "v0",
      description: undefined,
    });
  });

  it("names the key and its line in application.yml for a bad value", async () => {
    await using dir = await tempDir("thaw-openapi-");
    const cases: [string, RegExp][] = [
      [
        "  openapi:\n    docs: 3\n",
        /application\.yml:3: app\.openapi\.docs must be a path or false/,
      ],
      ["  openapi:\n    pathh: /x\n", /application\.yml:3: app\.openapi\.pathh: unknown key/],
      [
        "  openapi:\n    path: /{id}\n",
        /:3: app\.openapi\.path must be a fixed path like \/docs/,
      ],
      [
        "  openapi:\n    docs: /a/../b\n",
        /:3: app\.openapi\.docs: path "\/a\/..\/b" has an empty/,
      ],
      ["  openapi:\n    docs: /\n", /:3: app\.openapi\.docs must be a fixed path/],
      [
        "  openapi:\n    path: false\n    docs: /api-docs\n",
        /:4: app\.openapi\.docs: the docs page loads the document/,
      ],
      [
        "  openapi:\n    path: /d\n    docs: /d\n",
        /app\.openapi\.docs: the docs page and the document need two paths/,
      ],
      [
        "  openapi:\n    enabled: yes please\n",
        /:3: app\.openapi\.enabled must be true or false/,
      ],
      ["  openapi:\n    title: [a]\n", /:3: app\.openapi\.title must be text/],
      ["  openapi: [1]\n", /:2: app\.openapi must be true, false or a map/],
    ];
    for (const [yaml, expected] of cases) {
      const file = join(dir.path, "application.yml");
      await writeFile(file, `app:\n${yaml}`);
      const config = await loadConfig(file, { env: {} });
      assert.throws(
        () => openApiSettings(readSettings(config), undefined),
        (error: unknown) => error instanceof ConfigError && expected.test(error.message),
        yaml,
      );
    }
  });

  it("names the openApi() option for a bad option", async () => {
    await assert.rejects(
      settingsOf({}, { docs: 42 as unknown as string }),
      /openApi\(\) option docs must be a path or false/,
    );
  });

  it("reads enabled, path and docs from ${VAR} placeholders, which give text", async () => {
    const off = await settingsOf({ app: { openapi: { enabled: "false" } } });
    assert.equal(off.path, undefined);
    const on = await settingsOf({ app: { openapi: { enabled: "true", docs: "false" } } });
    assert.deepEqual([on.path, on.docs], ["/openapi.json", undefined]);
    assert.equal((await settingsOf({ app: { openapi: "true" } })).docs, "/docs");
  });

  it("refuses an option that is neither a boolean nor a map, rather than serving", async () => {
    for (const option of [null, "false", 0, "", []]) {
      await assert.rejects(
        settingsOf({}, option as unknown as boolean),
        /openApi\(\): the options must be an object, got /,
        String(option),
      );
    }
  });

  it("keeps a file's app.openapi: false when the option gives other keys", async () => {
    for (const file of [false, "false"]) {
      const s = await settingsOf({ app: { openapi: file } }, { title: "Users" });
      assert.deepEqual([s.path, s.docs, s.title], [undefined, undefined, "Users"]);
    }
  });

  it("asks for a version written as a number to be quoted, since YAML reads 1.10 as 1.1", async () => {
    await assert.rejects(
      settingsOf({ app: { openapi: { version: 1.1 } } }),
      /app\.openapi\.version must be text: quote it \(version: "1\.1"\)/,
    );
  });

  it("turns the page off with the document (path: false), unless the page is asked for", async () => {
    const s = await settingsOf({ app: { openapi: { path: false } } });
    assert.deepEqual([s.path, s.docs], [undefined, undefined]);
    await assert.rejects(
      settingsOf({ app: { openapi: { path: false, docs: "/docs" } } }),
      /app\.openapi\.docs: the docs page loads the document/,
    );
  });

  it("lets a disabled configuration keep its keys", async () => {
    const off = await settingsOf({
      app: { openapi: { enabled: false, docs: false, version: "1.5" } },
    });
    assert.deepEqual({ ...off }, {
      path: undefined,
      docs: undefined,
      title: "OpenAPI definition",
      version: "1.5",
      description: undefined,
    });
    // A disabled file with a path false is not an error: nothing is served.
    await settingsOf({ app: { openapi: { enabled: false, path: false } } });
  });

  it("resolves any option over any file as a reference model does (property)", async () => {
    const place = fc.option(fc.constantFrom<string | false>("/spec.json", "/api/docs", false), {
      nil: undefined,
    });
    const section = fc.record({
      enabled: fc.option(fc.boolean(), { nil: undefined }),
      path: place,
      docs: place,
      title: fc.option(fc.string(), { nil: undefined }),
    }, { requiredKeys: [] });
    const fileValue = fc.oneof(fc.constant(undefined), fc.boolean(), section);
    const optionValue = fc.oneof(fc.constant(undefined), fc.boolean(), section);
    await fc.assert(
      fc.asyncProperty(fileValue, optionValue, async (file, option) => {
        const values = file === undefined ? {} : { app: { openapi: file } };
        // The model: a file's `true`/`false` is its `enabled`; the option's given keys, then the
        // file's, decide each setting; options or a file turn serving on unless one says not.
        const fromFile: Record<string, unknown> = typeof file === "boolean"
          ? { enabled: file }
          : { ...file };
        const fromOption: Record<string, unknown> = typeof option === "object" ? { ...option } : {};
        const merged = { ...fromFile };
        for (const [k, v] of Object.entries(fromOption)) if (v !== undefined) merged[k] = v;
        const on = option === false
          ? false
          : (merged.enabled as boolean | undefined) ?? (option !== undefined || file !== undefined);
        const path = merged.path === false ? undefined : (merged.path ?? "/openapi.json") as string;
        let docs = merged.docs === false ? undefined : (merged.docs ?? "/docs") as string;
        let expected: unknown;
        if (on && path === undefined && typeof merged.docs === "string") expected = ConfigError;
        else if (on && path !== undefined && docs === path) expected = ConfigError;
        else {
          if (path === undefined) docs = undefined;
          expected = {
            path: on ? path : undefined,
            docs: on ? docs : undefined,
            title: merged.title ?? "OpenAPI definition",
          };
        }
        let actual: unknown;
        try {
          const s = await settingsOf(values, option as OpenApiOptions | boolean | undefined);
          actual = { path: s.path, docs: s.docs, title: s.title };
        } catch (error) {
          assert.ok(error instanceof ConfigError, String(error));
          actual = ConfigError;
        }
        assert.deepEqual(actual, expected);
      }),
      propertyOptions(300),
    );
  });
});
