// A route @PermitAll() or security.permit-all opens, whose own method @Secured or @PreAuthorize
// still guards: the method's check needs the caller, so the route's guard must read the
// credentials (anyone else is refused 401 there, as the check would refuse them).
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { bootstrap, GetMapping, RequestMapping, RestController } from "../../mod.ts";
import { openApiDocument } from "../../openapi.ts";
import { PermitAll, PostAuthorize, PreAuthorize, Secured, security } from "../../security.ts";
import { memoryLogger } from "../helpers.ts";
import { IssuerServer, type SigningKey, signingKey, token } from "./issuer_server.ts";

@RestController()
@RequestMapping("/desk")
@PermitAll()
class Desk {
  @GetMapping("/hours")
  hours(): string {
    return "9 to 5";
  }

  @GetMapping("/admin")
  @Secured("ROLE_ADMIN")
  admin(): string {
    return "admin";
  }

  @GetMapping("/own")
  @PreAuthorize((caller) => caller.name === "ann")
  own(): string {
    return "ann's";
  }
}

@RestController()
class Listed {
  @GetMapping("/listed/admin")
  @Secured("ROLE_ADMIN")
  admin(): string {
    return "listed admin";
  }
}

// @PermitAll() on the method itself, beside the method's own checks: the route is open, and the
// checks still decide, as Spring runs both (the class's @Secured alone is lifted).
@RestController()
@RequestMapping("/mixed")
@Secured("ROLE_STAFF")
class Mixed {
  @GetMapping("/salary")
  @PermitAll()
  @PostAuthorize((caller, result: { owner: string }) => result.owner === caller.name)
  salary(): { owner: string; amount: string } {
    return { owner: "bob", amount: "bob-salary-91k" };
  }

  @GetMapping("/admin")
  @PermitAll()
  @Secured("ROLE_ADMIN")
  admin(): string {
    return "admin";
  }

  @GetMapping("/own")
  @PreAuthorize((caller) => caller.name === "ann")
  @PermitAll()
  own(): string {
    return "ann's";
  }

  @GetMapping("/open")
  @PermitAll()
  open(): string {
    return "open";
  }
}

describe("a route opened to anyone whose method security still guards it", () => {
  let key: SigningKey;
  let issuer: IssuerServer;
  before(async () => {
    key = await signingKey("k1");
    issuer = await IssuerServer.start([key]);
  });
  after(() => issuer.down());

  it("reads the caller's token there: the method's check decides", async () => {
    const app = await bootstrap({
      controllers: [Desk, Listed, Mixed],
      config: {
        security: {
          "permit-all": ["/listed/**"],
          oauth2: {
            resourceserver: { jwt: { "issuer-uri": issuer.url, "roles-claim-name": "roles" } },
          },
        },
      },
      security: security(),
      logger: memoryLogger(),
    });
    const get = async (path: string, claims?: Record<string, unknown>) =>
      await app.fetch(
        new Request(`http://localhost${path}`, {
          headers: claims === undefined ? {} : {
            authorization: `Bearer ${await token(key, { iss: issuer.url, ...claims }, Date.now())}`,
          },
        }),
      );
    try {
      assert.equal(await (await get("/desk/hours")).text(), "9 to 5");
      for (const path of ["/desk/admin", "/listed/admin"]) {
        const admin = await get(path, { sub: "root", roles: ["ADMIN"] });
        assert.equal(admin.status, 200, path);
        assert.equal((await get(path, { sub: "ann" })).status, 403, path);
        const anonymous = await get(path);
        assert.equal(anonymous.status, 401, path);
        assert.equal(anonymous.headers.get("www-authenticate"), "Bearer", path);
      }
      assert.equal(await (await get("/desk/own", { sub: "ann" })).text(), "ann's");
      assert.equal((await get("/desk/own", { sub: "bob" })).status, 403);
      // @PermitAll() beside the method's own check: the check decides, and leaks nothing.
      const salary = async (claims?: Record<string, unknown>) => {
        const answer = await get("/mixed/salary", claims);
        return [answer.status, await answer.text()];
      };
      assert.deepEqual(await salary({ sub: "bob" }), [
        200,
        '{"owner":"bob","amount":"bob-salary-91k"}',
      ]);
      for (const [status, body] of [await salary({ sub: "ann" }), await salary()]) {
        assert.ok(status === 401 || status === 403, String(status));
        assert.doesNotMatch(String(body), /salary-91k/);
      }
      assert.equal((await get("/mixed/salary")).status, 401);
      assert.equal((await get("/mixed/admin", { sub: "root", roles: ["ADMIN"] })).status, 200);
      assert.equal((await get("/mixed/admin", { sub: "ann", roles: ["STAFF"] })).status, 403);
      assert.equal((await get("/mixed/admin")).status, 401);
      assert.equal((await get("/mixed/own", { sub: "ann" })).status, 200);
      assert.equal((await get("/mixed/own", { sub: "bob" })).status, 403);
      // The class's @Secured alone is lifted.
      assert.equal(await (await get("/mixed/open")).text(), "open");
      // The document says the same.
      const doc = await openApiDocument(app);
      const security = (path: string) => (doc.paths[path].get as { security?: unknown }).security;
      assert.deepEqual(security("/desk/hours"), [{}, { bearerAuth: [] }]);
      assert.deepEqual(security("/desk/admin"), [{ bearerAuth: ["ROLE_ADMIN"] }]);
      assert.deepEqual(security("/desk/own"), [{ bearerAuth: [] }]);
      assert.deepEqual(security("/listed/admin"), [{ bearerAuth: ["ROLE_ADMIN"] }]);
    } finally {
      await app.close();
    }
  });
});
