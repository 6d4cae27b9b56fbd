import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  bootstrap,
  DefinitionError,
  DeleteMapping,
  GetMapping,
  PatchMapping,
  PathVariable,
  PostMapping,
  PutMapping,
  RequestMapping,
  RestController,
} from "../../mod.ts";
import { Hono } from "hono";
import { call } from "../helpers.ts";

@RestController()
@RequestMapping("/items")
class VariableFirst {
  @GetMapping("/{id}", PathVariable("id"))
  byId(id: string): string {
    return `id:${id}`;
  }
  @GetMapping("/search")
  search(): string {
    return "search";
  }
  @PutMapping("/{id}", PathVariable("id"))
  put(id: string): string {
    return `put:${id}`;
  }
  @DeleteMapping("/{id}", PathVariable("id"))
  del(id: string): string {
    return `delete:${id}`;
  }
  @PatchMapping("/{id}", PathVariable("id"))
  patch(id: string): string {
    return `patch:${id}`;
  }
  @PostMapping("")
  create(): string {
    return "create";
  }
}

@RestController()
class LiteralFirst {
  @GetMapping("/things/search")
  search(): string {
    return "search";
  }
  @GetMapping("/things/{id}", PathVariable("id"))
  byId(id: string): string {
    return `id:${id}`;
  }
  @GetMapping("/things/{id}/parts/{part}", PathVariable("id"), PathVariable("part"))
  part(id: string, part: string): string {
    return `${id}/${part}`;
  }
}

describe("routing", () => {
  it("serves every HTTP method under a class prefix", async () => {
    const app = await bootstrap({ controllers: [VariableFirst] });
    assert.equal(await (await call(app, "GET", "/items/7")).text(), "id:7");
    assert.equal(await (await call(app, "PUT", "/items/7")).text(), "put:7");
    assert.equal(await (await call(app, "DELETE", "/items/7")).text(), "delete:7");
    assert.equal(await (await call(app, "PATCH", "/items/7")).text(), "patch:7");
    assert.equal(await (await call(app, "POST", "/items")).text(), "create");
  });

  it("a literal segment beats a variable whatever the declaration order", async () => {
    const app = await bootstrap({ controllers: [VariableFirst, LiteralFirst] });
    assert.equal(await (await call(app, "GET", "/items/search")).text(), "search");
    assert.equal(await (await call(app, "GET", "/things/search")).text(), "search");
    assert.equal(await (await call(app, "GET", "/things/x/parts/y")).text(), "x/y");
  });

  it("decodes path variables", async () => {
    const app = await bootstrap({ controllers: [LiteralFirst] });
    assert.equal(await (await call(app, "GET", "/things/a%20b")).text(), "id:a b");
  });

  it("answers HEAD for a GET route, without a body", async () => {
    const app = await bootstrap({ controllers: [LiteralFirst] });
    const res = await call(app, "HEAD", "/things/1");
    assert.equal(res.status, 200);
    assert.equal(await res.text(), "");
  });

  it("answers 404 for an unknown path", async () => {
    const app = await bootstrap({ controllers: [LiteralFirst] });
    const res = await call(app, "GET", "/nope");
    assert.equal(res.status, 404);
    assert.equal((await res.json()).error, "No route for GET /nope");
  });

  it("answers 405 with Allow for a known path and another method", async () => {
    const app = await bootstrap({ controllers: [LiteralFirst, VariableFirst] });
    const res = await call(app, "POST", "/things/search");
    assert.equal(res.status, 405);
    assert.equal(res.headers.get("allow"), "GET, HEAD, OPTIONS");
    const items = await call(app, "POST", "/items/3");
    assert.equal(items.headers.get("allow"), "GET, HEAD, PUT, DELETE, PATCH, OPTIONS");
  });

  it("answers OPTIONS on a known path with Allow", async () => {
    const app = await bootstrap({ controllers: [VariableFirst] });
    const res = await call(app, "OPTIONS", "/items");
    assert.equal(res.status, 204);
    assert.equal(res.headers.get("allow"), "POST, OPTIONS");
  });

  it("refuses two handlers for one method and pattern, naming both", async () => {
    @RestController()
    class Other {
      @GetMapping("/items/{key}", PathVariable("key"))
      get(key: string): string {
        return key;
      }
    }
    await assert.rejects(
      bootstrap({ controllers: [VariableFirst, Other] }),
      (e: unknown) =>
        e instanceof DefinitionError &&
        e.message ===
          "Two handlers for GET /items/{key}: VariableFirst.byId (GET /items/{id}) and Other.get (GET /items/{key})",
    );
  });

  it("refuses malformed paths, naming the method", async () => {
    const bad: [string, RegExp][] = [
      ["/a/{id", /neither plain text nor a whole \{name\} variable/],
      ["/a/x{id}", /neither plain text/],
      ["/a/*", /neither plain text/],
      ["/a/{id}/{id}", /names \{id\} twice/],
      ["/a/../b", /"\.\." segment/],
      ["/a//b", /empty/],
      ["/pct%41/{id}", /neither plain text/], // declared decoded, or it could never match
      ["/a\\b", /neither plain text/],
      ["/a#b", /neither plain text/], // a fragment never reaches the server
    ];
    for (const [path, why] of bad) {
      @RestController()
      class Bad {
        @GetMapping(path)
        get(): string {
          return "";
        }
      }
      await assert.rejects(bootstrap({ controllers: [Bad] }), (e: unknown) => {
        assert.ok(e instanceof DefinitionError, String(e));
        assert.match(e.message, /^Bad\.get \(@GET/);
        assert.match(e.message, why);
        return true;
      });
    }
  });

  it("a subclass inherits its parent's routes and may remap a method", async () => {
    @RestController()
    class Parent {
      @GetMapping("/p/a")
      a(): string {
        return "a";
      }
      @GetMapping("/p/b")
      b(): string {
        return "b";
      }
    }
    @RestController()
    class Child extends Parent {
      @GetMapping("/c/b")
      override b(): string {
        return "child b";
      }
    }
    const app = await bootstrap({ controllers: [Child] });
    assert.equal(await (await call(app, "GET", "/p/a")).text(), "a");
    assert.equal(await (await call(app, "GET", "/c/b")).text(), "child b");
    assert.equal((await call(app, "GET", "/p/b")).status, 404);
  });

  it("exposes the compiled Hono app for middleware", async () => {
    @RestController({ name: "things" })
    class Named {
      @GetMapping("/named")
      get(): string {
        return "named";
      }
    }
    const app = await bootstrap({ controllers: [Named] });
    assert.ok(app.getBean("things") instanceof Named);
    const wrapped = new Hono();
    wrapped.use(async (c, next) => {
      await next();
      c.res.headers.set("x-wrapped", "yes");
    });
    wrapped.route("/api", app.hono);
    const res = await wrapped.fetch(new Request("http://localhost/api/named"));
    assert.equal(await res.text(), "named");
    assert.equal(res.headers.get("x-wrapped"), "yes");
  });
});

// The outside review's controllers: routes whose patterns are prefixes of each other made the old
// comparator call `/acc` and `/acc/{id}` equal, so the sort could leave `/{id}` before a literal.
describe("routing order is total: ordinary CRUD controllers", () => {
  @RestController()
  @RequestMapping("/acc")
  class Accounts {
    @GetMapping("/{id}", PathVariable("id", Number))
    get(id: number): string {
      return `get:${id}`;
    }
    @GetMapping("/search")
    search(): string {
      return "search";
    }
    @GetMapping("")
    list(): string {
      return "list";
    }
    @PostMapping("")
    create(): string {
      return "create";
    }
    @PutMapping("/{id}", PathVariable("id", Number))
    put(id: number): string {
      return `put:${id}`;
    }
    @PatchMapping("/{id}", PathVariable("id", Number))
    patch(id: number): string {
      return `patch:${id}`;
    }
    @DeleteMapping("/{id}", PathVariable("id", Number))
    del(id: number): string {
      return `delete:${id}`;
    }
    @DeleteMapping("/all")
    deleteAll(): string {
      return "delete-all";
    }
    @GetMapping("/conflict")
    conflict(): string {
      return "conflict";
    }
  }

  it("sends every literal to its own handler, not to /{id}", async () => {
    const app = await bootstrap({ controllers: [Accounts] });
    const expect: [string, string, string][] = [
      ["GET", "/acc/conflict", "conflict"],
      ["GET", "/acc/search", "search"],
      ["DELETE", "/acc/all", "delete-all"],
      ["GET", "/acc", "list"],
      ["POST", "/acc", "create"],
      ["GET", "/acc/7", "get:7"],
      ["PUT", "/acc/7", "put:7"],
      ["PATCH", "/acc/7", "patch:7"],
      ["DELETE", "/acc/7", "delete:7"],
    ];
    for (const [method, path, body] of expect) {
      const res = await call(app, method, path);
      assert.equal(res.status, 200, `${method} ${path}`);
      assert.equal(await res.text(), body, `${method} ${path}`);
    }
  });

  it("decides segment by segment, at any depth", async () => {
    @RestController()
    class Deep {
      @GetMapping("/a/{x}/b/{y}", PathVariable("x"), PathVariable("y"))
      vars(x: string, y: string): string {
        return `vars:${x}:${y}`;
      }
      @GetMapping("/a/{x}/b/lit", PathVariable("x"))
      lit(x: string): string {
        return `lit:${x}`;
      }
      @GetMapping("/health")
      health(): string {
        return "health";
      }
      @GetMapping("/")
      root(): string {
        return "root";
      }
    }
    const app = await bootstrap({ controllers: [Deep] });
    assert.equal(await (await call(app, "GET", "/a/1/b/lit")).text(), "lit:1");
    assert.equal(await (await call(app, "GET", "/a/1/b/2")).text(), "vars:1:2");
    assert.equal(await (await call(app, "GET", "/")).text(), "root");
    assert.equal(await (await call(app, "GET", "/health")).text(), "health");
  });

  it("whatever controller declares the literal", async () => {
    @RestController()
    @RequestMapping("/u")
    class ById {
      @GetMapping("/{id}", PathVariable("id"))
      get(id: string): string {
        return `id:${id}`;
      }
    }
    @RestController()
    class Health {
      @GetMapping("/health")
      health(): string {
        return "health";
      }
    }
    @RestController()
    @RequestMapping("/u")
    class Me {
      @GetMapping("/me")
      me(): string {
        return "me";
      }
    }
    for (const order of [[ById, Health, Me], [Me, Health, ById], [Health, ById, Me]]) {
      const app = await bootstrap({ controllers: order });
      assert.equal(await (await call(app, "GET", "/u/me")).text(), "me");
      assert.equal(await (await call(app, "GET", "/u/42")).text(), "id:42");
    }
  });
});
