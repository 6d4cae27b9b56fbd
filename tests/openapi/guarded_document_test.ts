// What the document says of a route's status (`@ResponseStatus`) and of the middleware that
// guards it (its `describe`): the schemes, the requirement and the answers a guard gives.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import type { Context, Next } from "hono";
import {
  ApiResponse,
  bootstrap,
  Component,
  DefinitionError,
  type DescribedRoute,
  GetMapping,
  HttpStatus,
  type Middleware,
  type MiddlewareDocs,
  PostMapping,
  RequestBody,
  ResponseEntity,
  ResponseStatus,
  RestController,
  UseMiddleware,
} from "../../mod.ts";
import { openApi, type OpenApiDocument, openApiDocument } from "../../openapi.ts";
import { actuator } from "../../actuator.ts";
import { buildOpenApiDocument } from "../../src/openapi/openapi_document.ts";
import type { DocumentedRoute } from "../../src/openapi/documented_route.ts";
import { allOf, guardsOf } from "../../src/openapi/security.ts";
import { propertyOptions } from "../property.ts";
import { assertValidOpenApi } from "./openapi_validator.ts";

type Operation = {
  responses: Record<string, { description?: string; content?: unknown; $ref?: string }>;
  security?: Record<string, string[]>[];
};
const op = (doc: OpenApiDocument, path: string, method: string) =>
  doc.paths[path][method] as unknown as Operation;

const BEARER = { type: "http", scheme: "bearer", bearerFormat: "JWT" } as const;

/** A bearer-token guard bean that says what it checks and how it refuses. */
@Component()
class TokenGuard implements Middleware {
  asked: DescribedRoute[] = [];
  async handle(c: Context, next: Next): Promise<Response | void> {
    const auth = c.req.header("authorization");
    if (auth === undefined) return c.json({ error: "no token" }, 401);
    if (auth !== "Bearer admin") return c.json({ error: "not an admin" }, 403);
    await next();
  }
  describe(route: DescribedRoute): MiddlewareDocs {
    this.asked.push(route);
    return {
      securitySchemes: { bearer: BEARER },
      responses: { 401: "No bearer token", 403: { description: "The token is not an admin's" } },
    };
  }
}

const apiKey = Object.assign(
  async (c: Context, next: Next) => {
    if (c.req.header("x-api-key") !== "k") return c.text("no key", 401);
    await next();
  },
  {
    describe: (): MiddlewareDocs => ({
      securitySchemes: { key: { type: "apiKey", name: "x-api-key", in: "header" } },
      responses: { 401: "No API key" },
    }),
  },
);

const plain = async (_c: Context, next: Next) => await next();

@RestController()
@UseMiddleware(TokenGuard)
class AdminController {
  @ResponseStatus(HttpStatus.CREATED)
  @PostMapping("/admin/users", RequestBody())
  create(user: unknown) {
    return user;
  }

  // Declared nearer the handler, its own 401 wins over the guard's.
  @ApiResponse(200, { description: "The users" })
  @ApiResponse(401, { description: "Log in first" })
  @UseMiddleware(apiKey, plain)
  @GetMapping("/admin/users")
  list(): string[] {
    return [];
  }
}

@RestController()
class PublicController {
  @GetMapping("/public")
  open(): string {
    return "open";
  }

  // The document cannot read 201 from here: only @ResponseStatus or @ApiResponse tells it.
  @PostMapping("/public/entity")
  entity(): ResponseEntity {
    return ResponseEntity.created("/public/1");
  }

  // The mapping says it: documented as 201, and the entity keeps its own status and Location.
  @ResponseStatus(HttpStatus.CREATED)
  @PostMapping("/public/created")
  created(): ResponseEntity {
    return ResponseEntity.created("/public/2").withJson({ id: 2 });
  }

  @ResponseStatus(201)
  @ApiResponse(201, { description: "The new thing", schema: { type: "object" } })
  @ApiResponse(409, { description: "Taken" })
  @PostMapping("/public/things")
  thing() {
    return {};
  }

  @ResponseStatus(204)
  @PostMapping("/public/nothing")
  nothing(): void {}
}

describe("the document tells a route's status and its guards", () => {
  it("lists @ResponseStatus's status in place of 200, with the declared answers", async () => {
    const doc = await openApiDocument(await bootstrap({ controllers: [PublicController] }));
    await assertValidOpenApi(doc);
    assert.deepEqual(Object.keys(op(doc, "/public/things", "post").responses), [
      "201",
      "409",
      "500",
    ]);
    assert.deepEqual(op(doc, "/public/things", "post").responses["201"], {
      description: "The new thing",
      content: { "application/json": { schema: { type: "object" } } },
    });
    assert.deepEqual(op(doc, "/public/nothing", "post").responses["204"], {
      description: "No Content",
    });
    assert.equal(op(doc, "/public/nothing", "post").responses["200"], undefined);
    // Without it, what the code builds stays unknown to the document.
    assert.deepEqual(Object.keys(op(doc, "/public/entity", "post").responses), ["200", "500"]);
  });

  it("documents a ResponseEntity.created() route as 201 when its mapping says @ResponseStatus(CREATED)", async () => {
    const app = await bootstrap({ controllers: [PublicController] });
    const doc = await openApiDocument(app);
    await assertValidOpenApi(doc);
    assert.deepEqual(op(doc, "/public/created", "post").responses["201"], {
      description: "Created",
    });
    assert.equal(op(doc, "/public/created", "post").responses["200"], undefined);
    const response = await app.fetch(
      new Request("http://localhost/public/created", { method: "POST" }),
    );
    assert.equal(response.status, 201);
    assert.equal(response.headers.get("location"), "/public/2");
    assert.deepEqual(await response.json(), { id: 2 });
  });

  it("lists a guard's scheme, requirement and answers on the routes it guards only", async () => {
    const app = await bootstrap({
      controllers: [AdminController, PublicController],
      components: [TokenGuard],
      openapi: openApi({ docs: false }),
    });
    const doc = await openApiDocument(app);
    await assertValidOpenApi(doc);
    assert.deepEqual(doc.components.securitySchemes, {
      bearer: BEARER,
      key: { type: "apiKey", name: "x-api-key", in: "header" },
    });

    const create = op(doc, "/admin/users", "post");
    assert.deepEqual(create.security, [{ bearer: [] }]);
    assert.deepEqual(Object.keys(create.responses), [
      "201",
      "400",
      "401",
      "403",
      "413",
      "415",
      "500",
    ]);
    assert.deepEqual(create.responses["201"], { description: "Created" });
    assert.deepEqual(create.responses["401"], { description: "No bearer token" });
    assert.deepEqual(create.responses["403"], { description: "The token is not an admin's" });

    // Two guards in a row: both their schemes at once.
    const list = op(doc, "/admin/users", "get");
    assert.deepEqual(list.security, [{ bearer: [], key: [] }]);
    assert.deepEqual(list.responses["401"], { description: "Log in first" });
    assert.deepEqual(list.responses["403"], { description: "The token is not an admin's" });

    const open = op(doc, "/public", "get");
    assert.equal(open.security, undefined);
    assert.deepEqual(Object.keys(open.responses), ["200", "500"]);

    // The document served is the same one.
    const served = await (await app.fetch(new Request("http://x/openapi.json"))).json();
    assert.deepEqual(served, JSON.parse(JSON.stringify(doc)));
    // And the guard asked about each route it guards, as declared.
    const guard = app.getBean(TokenGuard);
    assert.deepEqual(
      guard.asked.map((r) => `${r.method} ${r.path}`).sort(),
      ["GET /admin/users", "POST /admin/users"],
    );
  });

  it("puts a global guard on every operation, the actuator's too, but where it lets through", async () => {
    @Component()
    class Gate implements Middleware {
      async handle(_c: Context, next: Next): Promise<void> {
        await next();
      }
      describe(route: DescribedRoute): MiddlewareDocs | undefined {
        if (route.path.startsWith("/actuator/") || route.path === "/public") return undefined;
        return { securitySchemes: { bearer: BEARER }, responses: { 401: "Log in" } };
      }
    }
    const app = await bootstrap({
      controllers: [PublicController],
      components: [Gate],
      middleware: [Gate],
      actuator: actuator(),
    });
    const doc = await openApiDocument(app);
    await assertValidOpenApi(doc);
    assert.equal(op(doc, "/public", "get").security, undefined);
    assert.deepEqual(op(doc, "/public/things", "post").security, [{ bearer: [] }]);
    assert.deepEqual(op(doc, "/public/things", "post").responses["401"], { description: "Log in" });
    assert.equal(op(doc, "/actuator/health", "get").security, undefined);

    const everywhere = Object.assign(async (_c: Context, next: Next) => await next(), {
      describe: (): MiddlewareDocs => ({ securitySchemes: { bearer: BEARER } }),
    });
    const all = await openApiDocument(
      await bootstrap({
        controllers: [PublicController],
        middleware: [everywhere],
        actuator: actuator(),
      }),
    );
    await assertValidOpenApi(all);
    for (const [path, item] of Object.entries(all.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        assert.deepEqual(
          (operation as Operation).security,
          [{ bearer: [] }],
          `${method} ${path}`,
        );
      }
    }
    assert.ok("/actuator/health" in all.paths);
  });

  it("leaves the document of an app without describing middleware as it was", async () => {
    const doc = await openApiDocument(
      await bootstrap({ controllers: [PublicController], middleware: [plain] }),
    );
    assert.equal("securitySchemes" in doc.components, false);
    for (const item of Object.values(doc.paths)) {
      for (const operation of Object.values(item)) {
        assert.equal("security" in (operation as object), false);
      }
    }
  });

  it("refuses a scheme declared twice differently, or a requirement of no scheme, naming them", async () => {
    const other = Object.assign(async (_c: Context, next: Next) => await next(), {
      describe: (): MiddlewareDocs => ({
        securitySchemes: { bearer: { type: "http", scheme: "basic" } },
      }),
    });
    Object.defineProperty(other, "name", { value: "basicGuard" });
    @RestController()
    @UseMiddleware(TokenGuard, other)
    class Clash {
      @GetMapping("/clash")
      get(): string {
        return "";
      }
    }
    await assert.rejects(
      openApiDocument(await bootstrap({ controllers: [Clash], components: [TokenGuard] })),
      (error: unknown) =>
        error instanceof DefinitionError &&
        /Clash\.get \(GET \/clash\): cannot be documented: The security scheme "bearer" is declared twice, differently: .*by middleware TokenGuard, .*"basic".* by middleware basicGuard/
          .test(error.message),
    );

    const orphan = Object.assign(async (_c: Context, next: Next) => await next(), {
      describe: (): MiddlewareDocs => ({ security: [{ oauth: ["read"] }] }),
    });
    Object.defineProperty(orphan, "name", { value: "orphanGuard" });
    await assert.rejects(
      openApiDocument(await bootstrap({ controllers: [PublicController], middleware: [orphan] })),
      /Middleware orphanGuard: describe\(\) requires the security scheme "oauth", which no middleware's securitySchemes declares/,
    );

    const broken = Object.assign(async (_c: Context, next: Next) => await next(), {
      describe: (): MiddlewareDocs => {
        throw new Error("boom");
      },
    });
    Object.defineProperty(broken, "name", { value: "brokenGuard" });
    await assert.rejects(
      openApiDocument(await bootstrap({ controllers: [PublicController], middleware: [broken] })),
      /PublicController\.open \(GET \/public\): cannot be documented: Middleware brokenGuard: describe\(\) threw: boom/,
    );
  });

  it("is valid, each operation requiring what all its guards do, for any guards (property)", async () => {
    const scheme = fc.constantFrom<[string, Record<string, unknown>]>(
      ["bearer", { type: "http", scheme: "bearer" }],
      ["basic", { type: "http", scheme: "basic" }],
      ["key", { type: "apiKey", name: "x-key", in: "header" }],
      ["oauth", {
        type: "oauth2",
        flows: { clientCredentials: { tokenUrl: "/token", scopes: { read: "Read" } } },
      }],
    );
    const docs = fc.record({
      schemes: fc.uniqueArray(scheme, { selector: ([name]) => name, maxLength: 2 }),
      responses: fc.dictionary(
        fc.constantFrom("401", "403", "429"),
        fc.oneof(fc.string({ maxLength: 8 }), fc.record({ description: fc.string() })),
        { maxKeys: 2 },
      ),
      explicit: fc.boolean(),
    });
    await fc.assert(
      fc.asyncProperty(
        fc.array(docs, { maxLength: 2 }),
        fc.array(fc.array(docs, { maxLength: 2 }), { minLength: 1, maxLength: 3 }),
        async (global, perRoute) => {
          const middleware = (list: typeof global) =>
            list.map((d) =>
              Object.assign(async (_c: Context, next: Next) => await next(), {
                describe: (): MiddlewareDocs => ({
                  securitySchemes: Object.fromEntries(
                    d.schemes,
                  ) as NonNullable<MiddlewareDocs["securitySchemes"]>,
                  responses: d.responses,
                  ...(d.explicit
                    ? { security: d.schemes.map(([name]) => ({ [name]: [] })).slice(0, 1) }
                    : {}),
                }),
              })
            );
          const routes: DocumentedRoute[] = perRoute.map((own, i) => ({
            httpMethod: "GET",
            path: `/r${i}`,
            variables: [],
            method: {
              type: PublicController,
              methodName: "open",
              binders: [],
              middleware: middleware(own),
            },
          }));
          const doc = buildOpenApiDocument(routes, {
            title: "t",
            version: "1",
            defaultErrorBody: true,
            guards: guardsOf(middleware(global), () => undefined),
          });
          await assertValidOpenApi(doc);
          perRoute.forEach((own, i) => {
            const expected = allOf(
              [...global, ...own].map((d) =>
                d.explicit
                  ? d.schemes.map(([name]) => ({ [name]: [] })).slice(0, 1)
                  : d.schemes.map(([name]) => ({ [name]: [] }))
              ),
            );
            const operation = op(doc, `/r${i}`, "get");
            assert.deepEqual(operation.security ?? [], expected);
            for (const d of [...global, ...own]) {
              for (const status of Object.keys(d.responses)) {
                assert.ok(status in operation.responses, `${status} on /r${i}`);
              }
            }
          });
        },
      ),
      propertyOptions(30),
    );
  });

  it("hands a guard each route's template as the route table parses it, a feature's too", () => {
    const routes: DocumentedRoute[] = [{
      httpMethod: "GET",
      path: "/files/{name:[a-z]+}",
      variables: ["name"],
      operation: {
        operationId: "file",
        tags: ["files"],
        summary: "A file",
        responses: new Map([[200, { description: "The file" }]]),
      },
    }];
    const templates: string[] = [];
    buildOpenApiDocument(routes, {
      title: "t",
      version: "1",
      defaultErrorBody: true,
      guards: (_route, _own, documented) => {
        templates.push(documented.template);
        return [];
      },
    });
    assert.deepEqual(templates, ["/files/{name}"]);
  });
});
