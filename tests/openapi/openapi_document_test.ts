import { parsePathRegex } from "../../src/web/path_regex.ts";
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { z } from "zod";
import {
  ApiOperation,
  ApiResponse,
  ApiTags,
  bootstrap,
  Component,
  ConfigError,
  DeleteMapping,
  type ErrorController,
  GetMapping,
  HttpRequest,
  HttpStatus,
  PatchMapping,
  PathVariable,
  PostMapping,
  PutMapping,
  RequestBody,
  RequestHeader,
  RequestMapping,
  RequestParam,
  type ResponseEntity,
  RestController,
} from "../../mod.ts";
import { openApi, type OpenApiDocument, openApiDocument } from "../../openapi.ts";
import { buildOpenApiDocument } from "../../src/openapi/openapi_document.ts";
import { parsePathPattern } from "../../src/web/path_pattern.ts";
import { propertyOptions } from "../property.ts";
import { assertValidOpenApi, resolvePointer, schemaValidator } from "./openapi_validator.ts";

// Every path parsed as an app with regexes in its paths parses it.
const parsePattern = (source: string) => parsePathPattern(source, parsePathRegex);

class Address {
  street = "";
  zip = 0;
  verified = false;
  lines: string[] = [];
  meta: Record<string, unknown> | null = null;
  #secret = "never documented";
  set nickname(value: string) {
    this.#secret = value;
  }
  label(): string {
    return this.#secret;
  }
}

const Tree: z.ZodType<{ name: string; children: unknown[] }> = z.object({
  name: z.string(),
  get children() {
    return z.array(Tree);
  },
});

const NewItem = z.object({ name: z.string().min(1), price: z.number().nonnegative() });
const Item = NewItem.extend({ id: z.number().int() });

/** One route for every binder kind and every documentation decorator. */
@RestController()
@RequestMapping("/api")
class EveryBinderController {
  @ApiOperation({ summary: "Reads an item", description: "By **id**.", deprecated: true })
  @ApiResponse(200, { description: "The item", schema: Item })
  @ApiResponse(HttpStatus.NOT_FOUND, { description: "No such item" })
  @GetMapping(
    "/items/{id}/{slug}/{flag}/{day}",
    PathVariable("id", Number),
    PathVariable("slug"),
    PathVariable("flag", Boolean),
    PathVariable("day", (text: string) => new Date(text)),
    RequestParam("q"),
    RequestParam("page", { type: Number, default: 1 }),
    RequestParam("exact", { type: Boolean, required: false }),
    RequestHeader("x-request-id", { required: false }),
    RequestHeader("X-Tenant", { type: Number }),
    HttpRequest,
  )
  read(..._args: unknown[]) {
    return {};
  }

  @ApiResponse(201, { schema: Item })
  @PostMapping("/items", RequestBody(NewItem))
  create(item: unknown) {
    return item;
  }

  @PutMapping("/addresses/{id}", PathVariable("id", Number), RequestBody(Address))
  replace(_id: number, address: Address) {
    return address;
  }

  @PatchMapping("/anything", RequestBody())
  patch(body: unknown) {
    return body;
  }

  @ApiResponse(200, { schema: Tree })
  @PostMapping("/trees", RequestBody(Tree))
  tree(body: unknown) {
    return body;
  }

  @ApiResponse(200, {
    contentType: "text/plain",
    schema: { type: "string", description: "A raw JSON Schema" },
  })
  @DeleteMapping("/items/{id}", PathVariable("id"))
  remove(_id: string) {
    return "gone";
  }

  // Mapped twice: two operations, two ids.
  @GetMapping("/ping")
  @GetMapping("/health")
  ping() {
    return "pong";
  }
}

@RestController()
@ApiTags("plain", "undocumented")
class PlainController {
  @GetMapping("/plain")
  plain() {
    return "text";
  }
}

/** What `Number` as a path variable, parameter or header type accepts: a safe integer. */
const INTEGER = {
  type: "integer",
  minimum: -Number.MAX_SAFE_INTEGER,
  maximum: Number.MAX_SAFE_INTEGER,
};

function operation(doc: OpenApiDocument, path: string, method: string): Record<string, unknown> {
  const op = doc.paths[path]?.[method];
  assert.ok(op !== undefined, `no ${method} ${path} in ${Object.keys(doc.paths).join(", ")}`);
  return op as Record<string, unknown>;
}

describe("the OpenAPI document of a test app with every binder kind", () => {
  it("is valid OpenAPI 3.1, with one operation per mapping", async () => {
    const app = await bootstrap({ controllers: [EveryBinderController, PlainController] });
    const doc = await openApiDocument(app);
    await assertValidOpenApi(doc);
    assert.equal(doc.openapi, "3.1.0");
    assert.deepEqual(doc.info, { title: "OpenAPI definition", version: "v0" });
    const ids = Object.values(doc.paths).flatMap((ops) =>
      Object.values(ops).map((op) => op.operationId)
    );
    assert.deepEqual(ids.sort(), [
      "EveryBinderController.create",
      "EveryBinderController.patch",
      "EveryBinderController.ping",
      "EveryBinderController.ping_2",
      "EveryBinderController.read",
      "EveryBinderController.remove",
      "EveryBinderController.replace",
      "EveryBinderController.tree",
      "PlainController.plain",
    ]);
    assert.deepEqual(doc.tags, [
      { name: "EveryBinderController" },
      { name: "plain" },
      { name: "undocumented" },
    ]);
    // The same object each call: built once.
    assert.equal(await openApiDocument(app), doc);
  });

  it("documents path variables, parameters and headers with their types and defaults", async () => {
    const doc = await openApiDocument(await bootstrap({ controllers: [EveryBinderController] }));
    const op = operation(doc, "/api/items/{id}/{slug}/{flag}/{day}", "get");
    assert.equal(op.summary, "Reads an item");
    assert.equal(op.description, "By **id**.");
    assert.equal(op.deprecated, true);
    assert.deepEqual(op.tags, ["EveryBinderController"]);
    assert.deepEqual(op.parameters, [
      { name: "id", in: "path", required: true, schema: INTEGER },
      { name: "slug", in: "path", required: true, schema: { type: "string" } },
      { name: "flag", in: "path", required: true, schema: { type: "boolean" } },
      { name: "day", in: "path", required: true, schema: { type: "string" } },
      { name: "q", in: "query", required: true, schema: { type: "string" } },
      { name: "page", in: "query", required: false, schema: { ...INTEGER, default: 1 } },
      { name: "exact", in: "query", required: false, schema: { type: "boolean" } },
      { name: "x-request-id", in: "header", required: false, schema: { type: "string" } },
      { name: "X-Tenant", in: "header", required: true, schema: INTEGER },
    ]);
    assert.equal(op.requestBody, undefined);
  });

  it("documents declared answers, and adds the errors Thaw gives by itself", async () => {
    const doc = await openApiDocument(await bootstrap({ controllers: [EveryBinderController] }));
    const read = operation(doc, "/api/items/{id}/{slug}/{flag}/{day}", "get");
    const responses = read.responses as Record<string, Record<string, unknown>>;
    assert.deepEqual(Object.keys(responses), ["200", "400", "404", "500"]);
    assert.equal(responses["404"].description, "No such item");
    assert.equal(responses["404"].content, undefined);
    assert.deepEqual(responses["400"], { $ref: "#/components/responses/BadRequest" });
    const create = operation(doc, "/api/items", "post").responses as Record<string, unknown>;
    assert.deepEqual(Object.keys(create), ["201", "400", "413", "415", "500"]);
    // An operation that cannot be refused: no 400.
    const plain = operation(doc, "/api/ping", "get").responses as Record<string, unknown>;
    assert.deepEqual(plain, {
      "200": { description: "OK" },
      "500": { $ref: "#/components/responses/InternalServerError" },
    });
    const remove = operation(doc, "/api/items/{id}", "delete").responses as Record<
      string,
      Record<string, unknown>
    >;
    assert.deepEqual(remove["200"].content, {
      "text/plain": { schema: { type: "string", description: "A raw JSON Schema" } },
    });
    for (const status of ["400", "404", "405", "413", "415", "500"]) {
      const shared = Object.values(doc.components.responses).find((r) =>
        String(r.description).length > 0 &&
        Object.entries(FRAMEWORK).some(([name, code]) =>
          code === status && doc.components.responses[name] === r
        )
      );
      assert.ok(shared, `no shared response for ${status}`);
    }
  });

  it("takes body schemas from zod (input side), classes and raw JSON Schema", async () => {
    const doc = await openApiDocument(await bootstrap({ controllers: [EveryBinderController] }));
    const body = (path: string, method: string) =>
      ((operation(doc, path, method).requestBody as Record<string, unknown>).content as Record<
        string,
        { schema: Record<string, unknown> }
      >)["application/json"].schema;
    const zodBody = body("/api/items", "post");
    assert.deepEqual(zodBody.required, ["name", "price"]);
    // The input side: zod's output form forbids extra keys, the input form does not.
    assert.equal(zodBody.additionalProperties, undefined);
    assert.equal(zodBody.$schema, undefined);
    assert.deepEqual(body("/api/addresses/{id}", "put"), {
      type: "object",
      title: "Address",
      properties: {
        street: { type: "string" },
        zip: { type: "number" },
        verified: { type: "boolean" },
        lines: { type: "array" },
        meta: {},
        nickname: {},
      },
      propertyNames: { not: { enum: ["label"] } },
    });
    assert.deepEqual(body("/api/anything", "patch"), {});
    const created = (operation(doc, "/api/items", "post").responses as Record<
      string,
      { content: Record<string, { schema: Record<string, unknown> }> }
    >)["201"].content["application/json"].schema;
    assert.equal(created.additionalProperties, false);
  });

  it("moves a recursive schema's definitions to components, so its $refs resolve", async () => {
    const doc = await openApiDocument(await bootstrap({ controllers: [EveryBinderController] }));
    const schema = ((operation(doc, "/api/trees", "post").requestBody as Record<string, unknown>)
      .content as Record<string, { schema: unknown }>)["application/json"].schema;
    const check = schemaValidator(doc);
    const tree = { name: "a", children: [{ name: "b", children: [] }] };
    assert.equal(check(schema, tree).valid, true);
    assert.equal(check(schema, { name: "a", children: [{ name: 1, children: [] }] }).valid, false);
    assert.ok(JSON.stringify(doc).includes("#/components/schemas/"));
    assert.ok(!JSON.stringify(doc).includes("#/$defs"));
  });

  it("validates real answers against the declared schema", async () => {
    const doc = await openApiDocument(await bootstrap({ controllers: [EveryBinderController] }));
    const check = schemaValidator(doc);
    const error = doc.components.schemas.Error;
    assert.equal(
      check(error, {
        timestamp: new Date().toISOString(),
        status: 400,
        message: "Bad Request",
        error: "x",
        issues: [{ message: "m", path: ["a", 0] }],
      }).valid,
      true,
    );
    assert.equal(check(error, { status: "400" }).valid, false);
  });

  it("leaves the error bodies without a schema when the app has an errorController of its own", async () => {
    @Component("errorController")
    class TextErrors implements ErrorController {
      handleError(_req: HttpRequest, response: ResponseEntity, status: HttpStatus): void {
        response.withXml({ error: status.getReasonPhrase() });
      }
    }
    const doc = await openApiDocument(
      await bootstrap({
        controllers: [PlainController],
        components: [TextErrors],
      }),
    );
    await assertValidOpenApi(doc);
    assert.equal(doc.components.schemas.Error, undefined);
    for (const response of Object.values(doc.components.responses)) {
      assert.equal(response.content, undefined);
    }
  });

  it("documents a subclass's own mapping and documentation over its parent's", async () => {
    @RestController()
    class Base {
      @ApiOperation({ summary: "base" })
      @GetMapping("/base")
      get() {
        return "base";
      }
    }
    @RestController()
    @RequestMapping("/child")
    class Child extends Base {
      @ApiOperation({ summary: "child" })
      @GetMapping("/own")
      override get() {
        return "child";
      }
    }
    const doc = await openApiDocument(await bootstrap({ controllers: [Child] }));
    assert.deepEqual(Object.keys(doc.paths), ["/child/own"]);
    assert.equal(operation(doc, "/child/own", "get").summary, "child");
  });

  it("hands out a frozen document, so no caller changes what another app documents", async () => {
    const doc = await openApiDocument(await bootstrap({ controllers: [PlainController] }));
    const status = (doc.components.schemas.Error.properties as Record<string, object>).status;
    assert.throws(() => Object.assign(status, { type: "string" }), TypeError);
    const other = await openApiDocument(await bootstrap({ controllers: [PlainController] }));
    assert.deepEqual(
      (other.components.schemas.Error.properties as Record<string, object>).status,
      { type: "integer" },
    );
  });

  it("names the operation whose schema cannot be written as JSON", async () => {
    @RestController()
    class Broken {
      @ApiResponse(200, { schema: { type: "integer", maximum: 10n } })
      @GetMapping("/broken")
      broken() {
        return 1;
      }
    }
    await assert.rejects(
      openApiDocument(await bootstrap({ controllers: [Broken] })),
      /Broken\.broken \(GET \/broken\): cannot be documented: .*BigInt/,
    );
  });

  it("writes one path for routes that differ only in their variables' names", async () => {
    @RestController()
    class Named {
      @GetMapping("/a/{x}/b/{z}", PathVariable("x", Number))
      get(_x: number) {}
      @PostMapping("/a/{y}/b/{w}", PathVariable("y", Boolean), PathVariable("w"))
      post(_y: boolean, _w: string) {}
    }
    const doc = await openApiDocument(await bootstrap({ controllers: [Named] }));
    await assertValidOpenApi(doc);
    assert.deepEqual(Object.keys(doc.paths), ["/a/{x}/b/{z}"]);
    assert.deepEqual(operation(doc, "/a/{x}/b/{z}", "post").parameters, [
      { name: "x", in: "path", required: true, schema: { type: "boolean" } },
      { name: "z", in: "path", required: true, schema: { type: "string" } },
    ]);
  });

  it("writes a regex as its parameter's pattern, a catch-all as a parameter for the rest", async () => {
    @RestController()
    class Patterned {
      @GetMapping("/n/{id:\\d+}", PathVariable("id", Number))
      get(_id: number) {}
      @PutMapping("/n/{key:[a-f0-9]{24}}/v/{v:\\d{1,3}\\-[a-z]+}")
      put() {}
      @GetMapping("/files/{*path}", PathVariable("path"))
      files(_path: string) {}
      @GetMapping("/{*all}")
      spa() {}
    }
    const doc = await openApiDocument(await bootstrap({ controllers: [Patterned] }));
    await assertValidOpenApi(doc);
    assert.deepEqual(Object.keys(doc.paths), [
      "/n/{id}",
      "/n/{key}/v/{v}",
      "/files/{path}",
      "/{all}",
    ]);
    const [id] = operation(doc, "/n/{id}", "get").parameters as { schema: object }[];
    assert.deepEqual(id.schema, {
      type: "integer",
      minimum: -Number.MAX_SAFE_INTEGER,
      maximum: Number.MAX_SAFE_INTEGER,
      pattern: "^(?:\\d+)$",
    });
    // `\-` outside a class is no pattern a `u`-flag validator compiles: written as Thaw runs it.
    const [key, v] = operation(doc, "/n/{key}/v/{v}", "put").parameters as {
      schema: { pattern: string };
    }[];
    assert.equal(key.schema.pattern, "^(?:[a-f0-9]{24})$");
    assert.equal(v.schema.pattern, "^(?:[0-9]{1,3}\\u002d[a-z]+)$");
    for (const { schema: { pattern } } of [key, v]) new RegExp(pattern, "u");
    const [files] = operation(doc, "/files/{path}", "get").parameters as Record<string, unknown>[];
    assert.equal(files.name, "path");
    assert.deepEqual(files.schema, { type: "string" });
    assert.match(
      files.description as string,
      /^The rest of the path after `\/files`, from its `\/` on/,
    );
    assert.match(files.description as string, /cannot hold `\/`.*server\.allow-encoded-slash/);
    const [all] = operation(doc, "/{all}", "get").parameters as Record<string, unknown>[];
    assert.match(all.description as string, /^The whole path, from its leading `\/`/);
  });

  it("documents the route tried first where OpenAPI writes two as one path, naming the others", async () => {
    @RestController()
    class Overlapping {
      @GetMapping("/n/{name}", PathVariable("name"))
      name(_name: string) {}
      @GetMapping("/n/{id:\\d+}", PathVariable("id", Number))
      number(_id: number) {}
      @ApiOperation({ description: "A word." })
      @GetMapping("/n/{word:[ab]+}", PathVariable("word"))
      word(_word: string) {}
      @GetMapping("/files/{*path}", PathVariable("path"))
      any(_path: string) {}
      @GetMapping("/files/{name}", PathVariable("name"))
      file(_name: string) {}
      @PostMapping("/n/{name}")
      post() {}
    }
    const doc = await openApiDocument(await bootstrap({ controllers: [Overlapping] }));
    await assertValidOpenApi(doc);
    assert.deepEqual(Object.keys(doc.paths), ["/n/{name}", "/files/{path}"]);
    const n = operation(doc, "/n/{name}", "get");
    // In the route table's order: of two regexes, the one first as text (`[ab]+` before `\d+`).
    assert.equal(n.operationId, "Overlapping.word");
    assert.equal(
      n.description,
      "A word.\n\nAlso served, where GET /n/{word:[ab]+} does not match: " +
        "GET /n/{id:\\d+} (Overlapping.number), then GET /n/{name} (Overlapping.name).",
    );
    const [word] = n.parameters as { name: string; schema: { pattern: string } }[];
    assert.equal(word.name, "name");
    assert.equal(word.schema.pattern, "^(?:[ab]+)$");
    const files = operation(doc, "/files/{path}", "get");
    assert.equal(files.operationId, "Overlapping.file");
    assert.equal(
      files.description,
      "Also served, where GET /files/{name} does not match: GET /files/{*path} (Overlapping.any).",
    );
    // Another method on that path is an operation of its own.
    assert.equal(operation(doc, "/n/{name}", "post").operationId, "Overlapping.post");
    assert.equal(operation(doc, "/n/{name}", "post").description, undefined);
  });

  it("writes a schema used for several answers once", async () => {
    @RestController()
    class Reused {
      @ApiResponse(200, { schema: Tree })
      @ApiResponse(201, { schema: Tree })
      @GetMapping("/a")
      a() {}
      @ApiResponse(200, { schema: Tree })
      @GetMapping("/b")
      b() {}
    }
    const doc = await openApiDocument(await bootstrap({ controllers: [Reused] }));
    await assertValidOpenApi(doc);
    assert.deepEqual(Object.keys(doc.components.schemas), ["Error", "Reused.a.200"]);
  });

  it("refuses a documentation decorator in the wrong place, naming it", () => {
    assert.throws(() => ApiResponse(99), /status must be 100 to 599, got 99/);
    assert.throws(() => ApiTags(), /one or more non-empty names/);
    assert.throws(
      () => ApiOperation(null as unknown as { summary: string }),
      /@ApiOperation: the options must be an object, got null/,
    );
    assert.throws(() => {
      class Twice {
        @ApiResponse(200)
        @ApiResponse(200)
        m() {}
      }
      return Twice;
    }, /@ApiResponse\(200\) given twice on m/);
  });
});

describe("openApiDocument(app)", () => {
  it("takes only an application that bootstrap() returned", async () => {
    const app = await bootstrap({ controllers: [PlainController] });
    for (const other of [{}, null, undefined, "app", app.hono]) {
      await assert.rejects(
        // A promise that rejects, not a throw: `.catch()` sees it.
        openApiDocument(other as object),
        (error: unknown) =>
          error instanceof TypeError &&
          error.message === "openApiDocument(app) takes an application that bootstrap() returned",
        String(other),
      );
    }
  });

  it("builds the document of an app that serves none from its keys and the options given", async () => {
    const fromOptions = await bootstrap({ controllers: [PlainController] });
    const doc = await openApiDocument(fromOptions, {
      title: "Plain",
      version: "3",
      description: "All *plain*.",
    });
    await assertValidOpenApi(doc);
    assert.deepEqual(doc.info, { title: "Plain", version: "3", description: "All *plain*." });
    assert.deepEqual(Object.keys(doc.paths), ["/plain"]);
    // Nothing is served for options that would serve.
    const asked = await bootstrap({ controllers: [PlainController] });
    await openApiDocument(asked, { enabled: true, path: "/spec.json" });
    for (const path of ["/spec.json", "/openapi.json", "/docs"]) {
      const res = await asked.fetch(new Request(`http://localhost${path}`));
      assert.equal(res.status, 404, path);
      await res.body?.cancel();
    }

    // The options win over the keys, each on its own.
    const config = { app: { openapi: { enabled: false, title: "From the file", version: "2" } } };
    const both = await bootstrap({ controllers: [PlainController], config });
    assert.deepEqual((await openApiDocument(both, { title: "From code" })).info, {
      title: "From code",
      version: "2",
    });
    // A bad option is named as such.
    await assert.rejects(
      openApiDocument(await bootstrap({ controllers: [PlainController] }), {
        version: 1.1 as unknown as string,
      }),
      (error: unknown) =>
        error instanceof ConfigError &&
        error.message.startsWith(
          `openApiDocument(app, options) option version must be text: quote it`,
        ),
    );
  });

  it("hands out the document an app serves, the same object each call", async () => {
    const app = await bootstrap({
      controllers: [PlainController],
      openapi: openApi({ title: "Served", docs: false }),
    });
    const doc = await openApiDocument(app);
    assert.equal(doc.info.title, "Served");
    assert.equal(await openApiDocument(app), doc);
    const served = await app.fetch(new Request("http://localhost/openapi.json"));
    assert.deepEqual(await served.json(), JSON.parse(JSON.stringify(doc)));
    // Options would describe another document than the one served: refused, not ignored.
    await assert.rejects(
      openApiDocument(app, { title: "Other" }),
      (error: unknown) =>
        error instanceof TypeError &&
        error.message.includes("this app was given openApi() at bootstrap"),
    );
  });

  it("builds a document per call with options, once per app without", async () => {
    const app = await bootstrap({ controllers: [PlainController] });
    assert.equal(await openApiDocument(app), await openApiDocument(app));
    const one = await openApiDocument(app, { title: "One" });
    const two = await openApiDocument(app, { title: "Two" });
    assert.deepEqual([one.info.title, two.info.title], ["One", "Two"]);
    assert.equal((await openApiDocument(app)).info.title, "OpenAPI definition");
  });
});

const FRAMEWORK: Record<string, string> = {
  BadRequest: "400",
  NotFound: "404",
  MethodNotAllowed: "405",
  ContentTooLarge: "413",
  UnsupportedMediaType: "415",
  InternalServerError: "500",
};

describe("the document of generated apps (property)", () => {
  const segment = fc.oneof(
    fc.constantFrom("users", "items", "a", "b-c", "x.y"),
    fc.constantFrom("{id}", "{name}", "{n}", "{id:\\d+}", "{n:[a-z]+(?:-[a-z]+)*}"),
  );
  // The path OpenAPI writes: variables of any kind are `{}` there.
  const openShape = (path: string) =>
    "/" + parsePattern(path).segments.map((s) => s.kind === "literal" ? s.text : "{}")
      .join("/");
  const binder = fc.oneof(
    fc.record({
      kind: fc.constantFrom("param" as const, "header" as const),
      name: fc.constantFrom("q", "page", "x-id", "__proto__", "constructor"),
      type: fc.constantFrom<unknown>(String, Number, Boolean, (t: string) => t),
      required: fc.boolean(),
      hasDefault: fc.boolean(),
      default: fc.oneof(fc.integer(), fc.string(), fc.constant(undefined), fc.constant({})),
    }),
    fc.record({
      kind: fc.constant("body" as const),
      target: fc.constantFrom<unknown>(undefined, Address, NewItem, Tree),
    }),
  );
  const route = fc.record({
    httpMethod: fc.constantFrom("GET", "POST", "PUT", "DELETE", "PATCH"),
    segments: fc.array(segment, { maxLength: 4 }),
    rest: fc.boolean(),
    binders: fc.array(binder, { maxLength: 4 }),
    methodName: fc.constantFrom("get", "list", "__proto__", "toString"),
    className: fc.constantFrom("A", "B", "Error"),
  });

  it("is valid OpenAPI 3.1 for any set of routes, with every path variable a parameter", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(route, { maxLength: 6 }), async (spec) => {
        const seen = new Set<string>();
        const routes = [];
        for (const r of spec) {
          // Names are unique within a path, and one route per method and path shape (bootstrap
          // refuses two handlers for `/a/{x}` and `/a/{y}`).
          const names = new Set<string>();
          const nameOf = (s: string) => s.slice(1, s.includes(":") ? s.indexOf(":") : -1);
          const parts: string[] = r.segments.filter((s) =>
            !s.startsWith("{") || !names.has(nameOf(s)) && names.add(nameOf(s))
          );
          if (r.rest) parts.push("{*rest}");
          const pattern = parsePattern("/" + parts.join("/"));
          // OpenAPI has one operation per method and path (the document refuses two).
          const key = `${r.httpMethod} ${openShape(pattern.source)}`;
          if (seen.has(key)) continue;
          seen.add(key);
          const type = { [r.className]: class {} }[r.className];
          const binders = [
            ...pattern.variables.map((name) => ({ kind: "path" as const, name, type: Number })),
            ...r.binders,
          ];
          routes.push({
            httpMethod: r.httpMethod as "GET",
            path: pattern.source,
            variables: pattern.variables,
            method: { type, methodName: r.methodName, binders: binders as never },
          });
        }
        const doc = buildOpenApiDocument(routes, {
          title: "t",
          version: "1",
          defaultErrorBody: true,
        });
        await assertValidOpenApi(doc);
        const count = Object.values(doc.paths).reduce((n, ops) => n + Object.keys(ops).length, 0);
        assert.equal(count, routes.length);
        // One path per shape; each route's operation under it, its variables named as the path.
        const shapes = Object.keys(doc.paths).map(openShape);
        assert.equal(new Set(shapes).size, shapes.length, "two paths of one shape");
        for (const r of routes) {
          const shape = openShape(r.path);
          const path = Object.keys(doc.paths).find((p) => openShape(p) === shape)!;
          const op = doc.paths[path][r.httpMethod.toLowerCase()] as Record<string, unknown>;
          const params = (op.parameters ?? []) as { name: string; in: string }[];
          assert.deepEqual(
            params.filter((p) => p.in === "path").map((p) => p.name),
            [...parsePattern(path).variables],
          );
          // A regex is the parameter's pattern; the catch-all says what it spans.
          const own = parsePattern(r.path).segments.filter((s) => s.kind !== "literal");
          for (const [i, p] of params.filter((p) => p.in === "path").entries()) {
            const segment = own[i];
            const { schema, description } = p as {
              schema?: { pattern?: string };
              description?: string;
            };
            assert.equal(
              schema?.pattern,
              segment.kind === "variable" && segment.constraint !== undefined
                ? `^(?:${segment.constraint.source})$`
                : undefined,
            );
            assert.equal(segment.kind === "rest", description?.includes("path") ?? false);
          }
          const keys = params.map((p) =>
            `${p.in} ${p.in === "header" ? p.name.toLowerCase() : p.name}`
          );
          assert.equal(new Set(keys).size, keys.length, "a parameter listed twice");
          for (const ref of JSON.stringify(op).match(/#\/components\/[^"]+/g) ?? []) {
            assert.notEqual(resolvePointer(doc, ref), undefined);
          }
        }
      }),
      propertyOptions(40),
    );
  });
});
