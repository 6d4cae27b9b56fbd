// The OpenAPI document of an app with security(): bearerAuth declared, each operation's
// requirement from the decorators (@Secured's scopes and roles), credentials optional where anyone
// may call (@PermitAll, security.permit-all, health), and the document valid OpenAPI 3.1.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { exportSPKI, generateKeyPair } from "jose";
import {
  bootstrap,
  GetMapping,
  PostMapping,
  RequestMapping,
  RestController,
  Service,
} from "../../mod.ts";
import { actuator } from "../../actuator.ts";
import { openApi, type OpenApiDocument, openApiDocument } from "../../openapi.ts";
import {
  PermitAll,
  PostAuthorize,
  PreAuthorize,
  Secured,
  security,
  type UserDetails,
  UserDetailsService,
} from "../../security.ts";
import { memoryLogger } from "../helpers.ts";
import { assertValidOpenApi } from "../openapi/openapi_validator.ts";

@RestController()
@RequestMapping("/orders")
class Orders {
  @GetMapping("")
  @Secured("SCOPE_orders:read", "SCOPE_orders:admin")
  list(): string[] {
    return [];
  }

  @PostMapping("")
  @Secured("ROLE_CLERK")
  create(): string {
    return "made";
  }

  @GetMapping("/count")
  @PreAuthorize((caller) => caller.name !== "")
  count(): number {
    return 0;
  }

  @GetMapping("/mine")
  @PostAuthorize((caller, owner: string) => owner === caller.name)
  mine(): string {
    return "someone";
  }

  @GetMapping("/open")
  @PermitAll()
  open(): string {
    return "open";
  }
}

@RestController()
class Public {
  @GetMapping("/public/news")
  news(): string {
    return "news";
  }
}

const security_ = (doc: OpenApiDocument, path: string, method = "get") =>
  (doc.paths[path][method] as { security?: unknown }).security;

async function app(withOpenApi: boolean) {
  const { publicKey } = await generateKeyPair("ES256", { extractable: true });
  return await bootstrap({
    controllers: [Orders, Public],
    config: {
      management: { endpoints: { web: { exposure: { include: "health,info" } } } },
      security: {
        "permit-all": ["/public/**", "/openapi.json", "/docs/**"],
        oauth2: { resourceserver: { jwt: { "public-key": await exportSPKI(publicKey) } } },
      },
    },
    logger: memoryLogger(),
    actuator: actuator(),
    security: security(),
    ...(withOpenApi ? { openapi: openApi() } : {}),
  });
}

describe("the OpenAPI document of a secured app", () => {
  for (const served of [true, false]) {
    it(`declares bearerAuth and each operation's requirement (${served ? "served" : "asked"})`, async () => {
      const secured = await app(served);
      try {
        const doc = served
          ? await (await secured.fetch(new Request("http://localhost/openapi.json")))
            .json() as OpenApiDocument
          : await openApiDocument(secured);
        await assertValidOpenApi(doc);
        assert.deepEqual(doc.components.securitySchemes, {
          bearerAuth: { type: "http", scheme: "bearer", bearerFormat: "JWT" },
        });
        // Any one of @Secured's authorities: one requirement each.
        const orders = security_(doc, "/orders") as Record<string, string[]>[];
        assert.deepEqual(
          orders.map((r) => r.bearerAuth[0]).sort(),
          ["orders:admin", "orders:read"],
        );
        assert.deepEqual(security_(doc, "/orders", "post"), [{ bearerAuth: ["ROLE_CLERK"] }]);
        assert.deepEqual(security_(doc, "/orders/count"), [{ bearerAuth: [] }]);
        // Anyone may call, and credentials sent are checked: none, or any one scheme.
        const optional = [{}, { bearerAuth: [] }];
        assert.deepEqual(security_(doc, "/orders/open"), optional);
        assert.deepEqual(security_(doc, "/public/news"), optional);
        assert.deepEqual(security_(doc, "/actuator/health"), optional);
        // The guard's own answers: 401 on every guarded operation, 403 where @Secured,
        // @PreAuthorize or @PostAuthorize decides.
        const responses = (path: string, method = "get") =>
          Object.keys((doc.paths[path][method] as { responses: object }).responses);
        assert.ok(responses("/orders/count").includes("401"));
        assert.ok(responses("/orders/count").includes("403"));
        assert.ok(responses("/orders/mine").includes("403"));
        assert.ok(responses("/orders", "post").includes("403"));
        assert.ok(!responses("/public/news").includes("403"));
        // Refused credentials are answered 401 there too; never 403.
        assert.ok(responses("/orders/open").includes("401"));
        assert.ok(!responses("/orders/open").includes("403"));
      } finally {
        await secured.close();
      }
    });
  }
});

describe("the OpenAPI document of an app with HTTP Basic and API keys beside tokens", () => {
  it("declares every scheme that is on, and lists each in a route's requirements", async () => {
    const { publicKey } = await generateKeyPair("ES256", { extractable: true });
    @Service()
    class Users extends UserDetailsService {
      loadUserByUsername(): Promise<UserDetails | undefined> {
        return Promise.resolve(undefined);
      }
    }
    const application = await bootstrap({
      controllers: [Orders],
      components: [Users],
      config: {
        security: {
          oauth2: { resourceserver: { jwt: { "public-key": await exportSPKI(publicKey) } } },
          "api-keys": {
            "header-name": "X-Batch-Key",
            keys: { batch: { key: "k-0123456789abcdef", authorities: ["ROLE_CLERK"] } },
          },
        },
      },
      logger: memoryLogger(),
      security: security(),
    });
    try {
      const doc = await openApiDocument(application);
      assertValidOpenApi(doc);
      assert.deepEqual(doc.components?.securitySchemes, {
        bearerAuth: { type: "http", scheme: "bearer", bearerFormat: "JWT" },
        basicAuth: { type: "http", scheme: "basic" },
        apiKeyAuth: { type: "apiKey", in: "header", name: "X-Batch-Key" },
      });
      assert.deepEqual(security_(doc, "/orders", "post"), [
        { bearerAuth: ["ROLE_CLERK"] },
        { basicAuth: ["ROLE_CLERK"] },
        { apiKeyAuth: ["ROLE_CLERK"] },
      ]);
      assert.deepEqual(security_(doc, "/orders/open"), [
        {},
        { bearerAuth: [] },
        { basicAuth: [] },
        { apiKeyAuth: [] },
      ]);
    } finally {
      await application.close();
    }
  });
});

describe("the OpenAPI document of a route that security.permit-all opens by its template", () => {
  it("says what the guard does: a route declared with a regex, opened as /items/{id}", async () => {
    @RestController()
    class Items {
      @GetMapping("/items/{id:\\d+}")
      one(): string {
        return "item";
      }
    }
    const { publicKey } = await generateKeyPair("ES256", { extractable: true });
    const application = await bootstrap({
      controllers: [Items],
      config: {
        security: {
          "permit-all": ["/items/{id}"],
          oauth2: { resourceserver: { jwt: { "public-key": await exportSPKI(publicKey) } } },
        },
      },
      logger: memoryLogger(),
      security: security(),
    });
    try {
      // The guard opens it...
      const served = await application.fetch(new Request("http://localhost/items/7"));
      assert.equal(served.status, 200);
      // ...and the document says so: credentials optional, a 401 only for refused ones.
      const doc = await openApiDocument(application);
      assert.deepEqual(security_(doc, "/items/{id}"), [{}, { bearerAuth: [] }]);
      const responses = (doc.paths["/items/{id}"].get as { responses: object }).responses;
      assert.ok(!Object.keys(responses).includes("403"));
    } finally {
      await application.close();
    }
  });
});
