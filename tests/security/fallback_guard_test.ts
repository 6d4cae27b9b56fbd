// The answers Thaw gives when no route takes a request (404, 405 with Allow, 204 with Allow to an
// OPTIONS) go through security() as a route does, over real HTTP through listen(app): as Spring
// Security's anyRequest().authenticated(), an anonymous client learns neither which paths exist nor
// which methods they take (401 for all), unless security.permit-all opens the path; a caller gets
// the plain answers. Refused credentials are refused there too. An unknown method (501) and a path
// no request may have (400) say nothing of the routes, and are answered first, as Spring's
// firewall does.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  bootstrap,
  DeleteMapping,
  GetMapping,
  PostMapping,
  RequestMapping,
  RestController,
} from "../../mod.ts";
import { listen, type Server } from "../../server.ts";
import { PermitAll, security } from "../../security.ts";
import { memoryLogger } from "../helpers.ts";
import { RUNTIME } from "../runtime.ts";
import { exchange, request } from "../runtime/raw_client.ts";
import { IssuerServer, type SigningKey, signingKey, token } from "./issuer_server.ts";

@RestController()
@RequestMapping("/admin")
class Admin {
  @GetMapping("/panel")
  panel(): string {
    return "SECRET panel";
  }
}

@RestController()
class Open {
  // Opened for GET alone: another method on its path is no route anyone may reach.
  @GetMapping("/hello")
  @PermitAll()
  hello(): string {
    return "hello";
  }

  @GetMapping("/public/page")
  page(): string {
    return "page";
  }
}

describe(`security() over the answers of no route, through listen(app) on ${RUNTIME}`, () => {
  let key: SigningKey;
  let issuer: IssuerServer;
  let server: Server;

  before(async () => {
    key = await signingKey("k1");
    issuer = await IssuerServer.start([key]);
    const app = await bootstrap({
      controllers: [Admin, Open],
      config: {
        security: {
          "permit-all": ["/public/**"],
          oauth2: { resourceserver: { jwt: { "issuer-uri": issuer.url } } },
        },
      },
      security: security(),
      logger: memoryLogger(),
    });
    server = await listen(app, { port: 0, hostname: "127.0.0.1", signals: false });
  });
  after(async () => {
    await server?.close();
    await issuer.down();
  });

  const send = (method: string, path: string, headers: string[] = []) =>
    exchange(server.port, request(method, path, headers));

  it("answers an anonymous request for no route 401, whether the path exists or not", async () => {
    const cases: [string, string][] = [
      ["GET", "/nowhere"],
      ["GET", "/admin"],
      ["GET", "/admin/panel/more"],
      ["HEAD", "/nowhere"],
      ["POST", "/admin/panel"],
      ["DELETE", "/admin/panel"],
      ["OPTIONS", "/admin/panel"],
      ["OPTIONS", "/nowhere"],
      ["POST", "/hello"],
      ["OPTIONS", "/hello"],
    ];
    for (const [method, path] of cases) {
      const answer = await send(method, path);
      const what = `${method} ${path}`;
      assert.equal(answer.status, 401, what);
      assert.match(answer.head, /\r\nwww-authenticate: Bearer\r\n/i, what);
      assert.doesNotMatch(answer.head, /\r\nallow:/i, what);
      assert.doesNotMatch(answer.body, /route|allow/i, what);
    }
  });

  it("gives a caller the plain 404, 405 with Allow, and 204 with Allow", async () => {
    const valid = await token(key, { iss: issuer.url }, Date.now());
    const auth = [`Authorization: Bearer ${valid}`];
    assert.equal((await send("GET", "/nowhere", auth)).status, 404);
    assert.equal((await send("HEAD", "/admin", auth)).status, 404);
    const notAllowed = await send("POST", "/admin/panel", auth);
    assert.equal(notAllowed.status, 405);
    assert.match(notAllowed.head, /\r\nallow: GET, HEAD, OPTIONS\r\n/i);
    const options = await send("OPTIONS", "/admin/panel", auth);
    assert.equal(options.status, 204);
    assert.match(options.head, /\r\nallow: GET, HEAD, OPTIONS\r\n/i);
    assert.equal((await send("GET", "/admin/panel", auth)).body, "SECRET panel");
  });

  it("answers plainly under a security.permit-all path, and refuses a bad token there", async () => {
    assert.equal((await send("GET", "/public/missing")).status, 404);
    assert.equal((await send("GET", "/public")).status, 404);
    const notAllowed = await send("POST", "/public/page");
    assert.equal(notAllowed.status, 405);
    assert.match(notAllowed.head, /\r\nallow: GET, HEAD, OPTIONS\r\n/i);
    assert.equal((await send("OPTIONS", "/public/page")).status, 204);
    // Only the path listed: /publicity is not under /public.
    assert.equal((await send("GET", "/publicity")).status, 401);
    const refused = await send("GET", "/public/missing", ["Authorization: Bearer not.a.token"]);
    assert.equal(refused.status, 401);
    assert.match(refused.head, /\r\nwww-authenticate: Bearer error="invalid_token"\r\n/i);
  });

  it("answers an unknown method 501 and a path no request may have 400, as before", async () => {
    assert.equal((await send("PROPFIND", "/admin/panel")).status, 501);
    assert.equal((await send("GET", "/admin%2Fpanel")).status, 400);
  });
});

@RestController()
@RequestMapping("/orders")
class Orders {
  @GetMapping("/{id}")
  order(): string {
    return "order";
  }

  // Not listed in security.permit-all: /orders/{id} opens the routes mapped so, not this one.
  @PostMapping("/mine")
  mine(): string {
    return "SECRET mine";
  }
}

@RestController()
@RequestMapping("/items")
class Items {
  @GetMapping("/{id:\\d+}")
  item(): string {
    return "item";
  }

  @DeleteMapping("/{name}")
  remove(): string {
    return "SECRET removed";
  }
}

@RestController()
class Sections {
  @PostMapping("/{section}/submit")
  submit(): string {
    return "SECRET submitted";
  }
}

describe("security() over the answers of no route, under a security.permit-all {name}", () => {
  it("opens no path that a route security.permit-all does not list takes", async () => {
    const app = await bootstrap({
      controllers: [Orders, Items, Sections],
      config: {
        security: {
          "permit-all": ["/orders/{id}", "/items/{id:\\d+}", "/pub/**"],
          "api-keys": { keys: { batch: { key: "k-0123456789abcdef", authorities: [] } } },
        },
      },
      security: security(),
      logger: memoryLogger(),
    });
    try {
      const send = (method: string, path: string) =>
        app.fetch(new Request(`http://localhost${path}`, { method }));
      // The router matches these paths to routes the list does not open.
      for (
        const [method, path] of [
          ["OPTIONS", "/orders/mine"],
          ["PUT", "/orders/mine"],
          ["OPTIONS", "/items/abc"],
          ["GET", "/items/abc"],
          // Under /pub/**, and the path of /{section}/submit, which the list does not open.
          ["OPTIONS", "/pub/submit"],
        ]
      ) {
        const answer = await send(method, path);
        assert.equal(answer.status, 401, `${method} ${path}`);
        assert.equal(answer.headers.get("allow"), null, `${method} ${path}`);
      }
      // The routes it opens keep their plain answers.
      const options = await send("OPTIONS", "/orders/7");
      assert.equal(options.status, 204);
      assert.equal(options.headers.get("allow"), "GET, HEAD, OPTIONS");
      assert.equal((await send("PUT", "/items/7")).status, 405);
      assert.equal((await send("GET", "/orders/7/lines")).status, 401);
      assert.equal((await send("GET", "/pub/other")).status, 404);
    } finally {
      await app.close();
    }
  });
});
