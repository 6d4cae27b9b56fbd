import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  bootstrap,
  Component,
  DefinitionError,
  DeleteMapping,
  type ErrorController,
  GetMapping,
  HttpRequest,
  PatchMapping,
  PathVariable,
  PostMapping,
  PutMapping,
  RequestMapping,
  RestController,
  UseMiddleware,
} from "../../mod.ts";
import { type Context, Hono, type Next } from "hono";
import { call, memoryLogger, TRANSPORTS } from "../helpers.ts";
import { serve } from "../../src/runtime/serve.ts";
import { requestPath } from "../../src/web/request_path.ts";

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
      ["/a/{id", /a "\{" is not closed/],
      ["/a/x{id}", /neither plain text/],
      ["/a/*", /"\*" is not supported; write \{name\} for one segment, or \{\*name\} as the last/],
      ["/a/**", /"\*\*" is not supported/],
      ["/a/{*rest}/b", /must be the last segment/],
      ["/a/{id:(a+)+}", /the regex of \{id\}: "\(a\+\)\+" repeats "a\+".*backtracks badly/],
      ["/a/{id:[^a]+}", /the regex of \{id\}: the class "\[\^a\]" matches "\/"/],
      ["/a/{id:\\d*}", /the regex of \{id\}: the regex matches an empty segment/],
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

// `{name:regex}` and `{*name}`: what each takes, what it gives the handler, and how they rank.
@RestController()
class Patterned {
  @GetMapping("/n/{id:\\d+}", PathVariable("id", Number))
  number(id: number): string {
    return `number:${id}`;
  }
  @GetMapping("/n/{name}", PathVariable("name"))
  name(name: string): string {
    return `name:${name}`;
  }
  @GetMapping("/n/{word:[ab]+}", PathVariable("word"))
  word(word: string): string {
    return `word:${word}`;
  }
  @GetMapping("/n/new")
  fresh(): string {
    return "new";
  }
  @GetMapping("/d/{date:\\d{4}-\\d{2}-\\d{2}}", PathVariable("date"))
  date(date: string): string {
    return `date:${date}`;
  }
  @GetMapping("/files/{*path}", PathVariable("path"))
  files(path: string): string {
    return `files:${JSON.stringify(path)}`;
  }
  @GetMapping("/files/{name}/meta", PathVariable("name"))
  meta(name: string): string {
    return `meta:${name}`;
  }
  @PostMapping("/files/{*path}", HttpRequest)
  upload(request: HttpRequest): string {
    return `upload:${JSON.stringify(request.getPathVariable("path"))}`;
  }
  @GetMapping("/m/{id}", PathVariable("id"))
  matrix(id: string): string {
    return `matrix:${id}`;
  }
}

@RestController()
class Fallback {
  @GetMapping("/{*path}", PathVariable("path"))
  spa(path: string): string {
    return `spa:${JSON.stringify(path)}`;
  }
  @GetMapping("/api/health")
  health(): string {
    return "health";
  }
}

async function text(app: { fetch: (r: Request) => Response | Promise<Response> }, path: string) {
  const res = await app.fetch(new Request(`http://localhost${path}`));
  return `${res.status} ${res.status === 200 ? await res.text() : ""}`.trim();
}

describe("path patterns: {name:regex} and {*name}", () => {
  it("a literal beats a constrained variable beats a plain one, whatever the order", async () => {
    for (const controllers of [[Patterned], [Patterned, Fallback], [Fallback, Patterned]]) {
      const app = await bootstrap({ controllers });
      assert.equal(await text(app, "/n/new"), "200 new");
      assert.equal(await text(app, "/n/42"), "200 number:42");
      assert.equal(await text(app, "/n/ab"), "200 word:ab");
      assert.equal(await text(app, "/n/x7"), "200 name:x7");
      assert.equal(await text(app, "/d/2024-02-29"), "200 date:2024-02-29");
    }
  });

  it("tests a regex on the decoded segment, and finds no route when none holds", async () => {
    const app = await bootstrap({ controllers: [Patterned] });
    assert.equal(await text(app, "/n/%34%32"), "200 number:42");
    assert.equal(await text(app, "/n/%61b"), "200 word:ab");
    assert.equal(await text(app, "/d/2024-2-29"), "404");
    assert.equal(await text(app, "/d/%32024%2D02-29"), "200 date:2024-02-29");
    const post = await call(app, "POST", "/d/2024-02-29");
    assert.equal(post.status, 405);
    assert.equal(post.headers.get("allow"), "GET, HEAD, OPTIONS");
    assert.equal((await call(app, "POST", "/d/2024")).status, 404);
    assert.equal((await call(app, "OPTIONS", "/d/x")).status, 404);
  });

  it("a catch-all takes the rest of the path, its leading '/' kept, as Spring's does", async () => {
    const app = await bootstrap({ controllers: [Patterned] });
    assert.equal(await text(app, "/files"), '200 files:""');
    assert.equal(await text(app, "/files/"), '200 files:"/"');
    assert.equal(await text(app, "/files/a/b.png"), '200 files:"/a/b.png"');
    assert.equal(await text(app, "/files//a"), '200 files:"//a"');
    assert.equal(await text(app, "/files/a%20b/c%3Fd%25"), '200 files:"/a b/c?d%"');
    assert.equal(await text(app, "/files/x/meta"), "200 meta:x"); // a variable beats it
    assert.equal(await text(app, "/filesx"), "404");
    // Dot segments are resolved before routing: what the catch-all gets has none.
    assert.equal(await text(app, "/files/a/../b"), '200 files:"/b"');
    assert.equal(await text(app, "/files/a/%2e%2e/%2E/b"), '200 files:"/b"');
    assert.equal(await text(app, "/files/.."), "404");
    // HttpRequest sees it too.
    assert.equal(await (await call(app, "POST", "/files/a/b")).text(), 'upload:"/a/b"');
    const other = await call(app, "PUT", "/files/a");
    assert.equal(other.status, 405);
    assert.equal(other.headers.get("allow"), "GET, HEAD, POST, OPTIONS");
  });

  it("a catch-all at the root is a fallback: every route more specific goes first", async () => {
    const app = await bootstrap({ controllers: [Fallback] });
    assert.equal(await text(app, "/"), '200 spa:"/"');
    assert.equal(await text(app, "/app/settings"), '200 spa:"/app/settings"');
    assert.equal(await text(app, "/api/health"), "200 health");
    assert.equal((await call(app, "POST", "/x")).headers.get("allow"), "GET, HEAD, OPTIONS");
  });

  it("keeps matrix parameters (;x=y) in the segment: a variable gets them, a regex sees them", async () => {
    const app = await bootstrap({ controllers: [Patterned] });
    assert.equal(await text(app, "/m/7;x=1;y=2"), "200 matrix:7;x=1;y=2");
    assert.equal(await text(app, "/m/7%3Bx=1"), "200 matrix:7;x=1");
    assert.equal(await text(app, "/n/7;x=1"), "200 name:7;x=1"); // not \d+
    assert.equal(await text(app, "/files/a;v=1/b"), '200 files:"/a;v=1/b"');
  });

  it("passes through a constrained route's own middleware only when its regex holds", async () => {
    const seen: string[] = [];
    const mark = (name: string) => async (_c: Context, next: Next) => {
      seen.push(name);
      await next();
    };
    @RestController()
    @UseMiddleware(mark("class"))
    class Guarded {
      @GetMapping("/g/{id:\\d+}", PathVariable("id"))
      @UseMiddleware(mark("digits"))
      digits(id: string): string {
        return `digits:${id}`;
      }
      @GetMapping("/g/{id}", PathVariable("id"))
      any(id: string): string {
        return `any:${id}`;
      }
    }
    const app = await bootstrap({ controllers: [Guarded] });
    assert.equal(await text(app, "/g/1"), "200 digits:1");
    assert.deepEqual(seen.splice(0), ["class", "digits"]);
    assert.equal(await text(app, "/g/x"), "200 any:x");
    assert.deepEqual(seen.splice(0), ["class"]);
  });

  it("with global middleware too: a regex that holds nowhere is a 404, or a 405", async () => {
    const seen: string[] = [];
    const app = await bootstrap({
      controllers: [Patterned],
      middleware: [async (_c: Context, next: Next) => {
        seen.push("global");
        await next();
      }],
    });
    assert.equal(await text(app, "/n/42"), "200 number:42");
    assert.equal(await text(app, "/d/2024-2-29"), "404");
    const post = await call(app, "POST", "/d/2024-02-29");
    assert.equal(post.status, 405);
    assert.equal(post.headers.get("allow"), "GET, HEAD, OPTIONS");
    assert.equal((await call(app, "HEAD", "/d/x")).status, 404);
    assert.deepEqual(seen, ["global", "global", "global", "global"]);
  });

  it("answers alike on Hono's RegExpRouter and TrieRouter", async () => {
    // Alone, these routes leave RegExpRouter nothing ambiguous; with a literal beside a variable it
    // gives up and the app's SmartRouter takes TrieRouter.
    @RestController()
    class Unambiguous {
      @GetMapping("/n/{id:\\d+}", PathVariable("id"))
      get(id: string): string {
        return `id:${id}`;
      }
      @GetMapping("/f/{*path}", PathVariable("path"))
      file(path: string): string {
        return `f:${path}`;
      }
    }
    @RestController()
    class Beside {
      @GetMapping("/n/all")
      all(): string {
        return "all";
      }
    }
    for (
      const [controllers, router] of [
        [[Unambiguous], "SmartRouter + RegExpRouter"],
        [[Unambiguous, Beside], "SmartRouter + TrieRouter"],
      ] as const
    ) {
      const app = await bootstrap({ controllers: [...controllers] });
      assert.equal(await text(app, "/n/12"), "200 id:12");
      assert.equal(app.hono.router.name, router);
      assert.equal(await text(app, "/n/1a"), "404");
      assert.equal(await text(app, "/f"), "200 f:");
      assert.equal(await text(app, "/f/a/b"), "200 f:/a/b");
    }
  });

  it("refuses two handlers for one shape, regexes compared as written", async () => {
    @RestController()
    class Same {
      @GetMapping("/a/{x:\\d+}", PathVariable("x"))
      x(x: string): string {
        return x;
      }
      @GetMapping("/a/{y:\\d+}", PathVariable("y"))
      y(y: string): string {
        return y;
      }
    }
    await assert.rejects(
      bootstrap({ controllers: [Same] }),
      /Two handlers for GET \/a\/\{y:\\d\+\}: Same\.x \(GET \/a\/\{x:\\d\+\}\) and Same\.y/,
    );
    @RestController()
    class Different {
      @GetMapping("/a/{x:\\d+}", PathVariable("x"))
      x(x: string): string {
        return `x:${x}`;
      }
      @GetMapping("/a/{y:[0-9]+}", PathVariable("y"))
      y(y: string): string {
        return `y:${y}`;
      }
      @GetMapping("/a/{z}", PathVariable("z"))
      z(z: string): string {
        return `z:${z}`;
      }
    }
    const app = await bootstrap({ controllers: [Different] });
    // Two regexes that both hold: the one that sorts first as text, `[0-9]+` before `\d+`.
    assert.equal(await text(app, "/a/1"), "200 y:1");
    assert.equal(await text(app, "/a/b"), "200 z:b");
  });

  it("names a catch-all in PathVariable and refuses a name the path lacks", async () => {
    @RestController()
    class Missing {
      // @ts-expect-error The compiler refuses it too; JavaScript has only the startup check.
      @GetMapping("/files/{*path}", PathVariable("file"))
      get(file: string): string {
        return file;
      }
    }
    await assert.rejects(
      bootstrap({ controllers: [Missing] }),
      /Missing\.get \(@GET "\/files\/\{\*path\}"\): PathVariable\("file"\) has no \{file\}/,
    );
  });

  it("gives the catch-all to an errorController and to a mounting app", async () => {
    const paths: unknown[] = [];
    @Component("errorController")
    class Errors implements ErrorController {
      handleError(...[request]: Parameters<ErrorController["handleError"]>): void {
        paths.push(request.getPathVariable("path"));
      }
    }
    @RestController()
    class Failing {
      @GetMapping("/boom/{*path}")
      boom(): string {
        throw new Error("boom");
      }
    }
    const app = await bootstrap({
      controllers: [Failing, Patterned],
      components: [Errors],
      logger: memoryLogger(),
    });
    await call(app, "GET", "/boom/a/b");
    assert.deepEqual(paths, ["/a/b"]);
    const parent = new Hono();
    parent.route("/api", app.hono);
    const res = await parent.fetch(new Request("http://localhost/api/files/a/b"));
    assert.equal(await res.text(), 'files:"/a/b"');
  });
});

describe("path patterns: hostile segments", () => {
  @RestController()
  class Hostile {
    @GetMapping("/c/{*rest}", PathVariable("rest"))
    rest(rest: string): string {
      return JSON.stringify(rest);
    }
    @GetMapping("/v/{v:[^/]+}", PathVariable("v"))
    variable(v: string): string {
      return JSON.stringify(v);
    }
  }

  it("every byte, plain or percent-encoded: no '/' the router did not see, no dot segment", async () => {
    const app = await bootstrap({ controllers: [Hostile] });
    for (let byte = 0; byte < 256; byte++) {
      const hex = `%${byte.toString(16).padStart(2, "0").toUpperCase()}`;
      const char = String.fromCharCode(byte);
      // As sent: printable ASCII but what ends a segment or the path (`\\` is `/` to the URL parser).
      const raw = byte > 0x20 && byte < 0x7f && !"/?#\\".includes(char) ? [`a${char}b`] : [];
      for (const segment of [hex, `a${hex}b`, `${hex}${hex}`, `${hex}.`, ...raw]) {
        for (const prefix of ["/c/x/", "/v/"]) {
          const path = prefix + segment;
          const res = await call(app, "GET", path);
          // Refused before routing, whatever the route: a '/' (or '\\') the router did not see,
          // controls, and bytes that are not UTF-8 (alone, or one byte twice, none is).
          const refused = segment !== `a${char}b` &&
            (byte === 0x2f || byte === 0x5c || byte < 0x20 || byte === 0x7f || byte >= 0x80);
          if (refused) {
            assert.equal(res.status, 400, path);
            await res.arrayBuffer();
            continue;
          }
          const decoded = decodeURIComponent(segment.replace(/%(?![0-9A-F]{2})/g, "%25"));
          const dots = decoded === "." || decoded === "..";
          if (prefix === "/v/") {
            // Resolved, `/v/` and `/` match no route; anything else is the variable's value.
            if (dots) {
              assert.equal(res.status, 404, path);
              await res.arrayBuffer();
              continue;
            }
            assert.equal(res.status, 200, path);
            assert.equal(JSON.parse(await res.text()), decoded, path);
          } else {
            // The catch-all takes every path under `/c`: the segment as it was, or resolved away,
            // and never a '/' but the router's own.
            assert.equal(res.status, 200, path);
            const value = JSON.parse(await res.text()) as string;
            assert.equal(value, dots ? (decoded === "." ? "/x/" : "/") : `/x/${decoded}`, path);
          }
        }
      }
    }
  });

  it("with allowEncodedSlash, a %2F reaches the catch-all's value as '/', as a variable's", async () => {
    const app = await bootstrap({ controllers: [Hostile], allowEncodedSlash: true });
    assert.equal(await text(app, "/c/a%2Fb/c"), '200 "/a/b/c"');
    assert.equal(await text(app, "/c/a%2F..%2Fb"), '200 "/a/../b"'); // as the README warns
    assert.equal(await text(app, "/v/a%2Fb"), "404"); // no regex matches "/"
  });
});

// A parent app routes by its own reading of the path, which lacks Thaw's checks: a catch-all's
// value, a path of its own, is checked where it is read. Over a socket too, as a client sends it.
async function mounted(parent: Hono, transport: string) {
  if (transport === "app.fetch") {
    return {
      send: (path: string) => Promise.resolve(parent.fetch(new Request(`http://localhost${path}`))),
      close: async () => {},
    };
  }
  const server = await serve(parent.fetch, {
    port: 0,
    hostname: "127.0.0.1",
    maxBodySize: 1024,
    refuse: (status) => new Response(null, { status }),
    signals: false,
    shutdownTimeoutMs: 1000,
    logger: memoryLogger(),
  });
  return {
    send: (path: string) => fetch(`http://127.0.0.1:${server.port}${path}`),
    close: () => server.close(),
  };
}

// A request whose target is what the server handed over, unresolved (`Deno.serve` gives
// `/a/../b` as sent), which a `Request` built from a string never is.
function rawTarget(url: string): Request {
  const request = new Request("http://localhost/");
  Object.defineProperty(request, "url", { value: url });
  return request;
}

const REFUSED: readonly (readonly [string, RegExp])[] = [
  ["/files/a/..%2F..%2Fsecret", /encoded '\/' \(%2F\)/],
  ["/files/..%2F", /encoded '\/' \(%2F\)/],
  ["/files/a%FF", /not valid UTF-8/],
  ["/files/a%0Ab", /encoded control character/],
  ["/files/a%5Cb", /Invalid request target/],
];

for (const transport of TRANSPORTS) {
  describe(`a catch-all in an app mounted under another, over ${transport}`, () => {
    it("refuses what Thaw refuses unmounted, with the same 400", async () => {
      const app = await bootstrap({ controllers: [Patterned] });
      const client = await mounted(new Hono().route("/api", app.hono), transport);
      try {
        for (const [path, message] of REFUSED) {
          const direct = await call(app, "GET", path);
          assert.equal(direct.status, 400, path);
          const expected = (await direct.json()).error;
          assert.match(expected, message);
          const res = await client.send(`/api${path}`);
          assert.equal(res.status, 400, `/api${path}`);
          assert.equal((await res.json()).error, expected, path);
        }
        const fine = await client.send("/api/files/a/b%20c");
        assert.equal(await fine.text(), 'files:"/a/b c"');
      } finally {
        await client.close();
      }
    });

    it("a parent that reads paths as Thaw does refuses them on every route", async () => {
      const app = await bootstrap({ controllers: [Patterned] });
      assert.equal(app.hono.getPath, requestPath);
      const parent = new Hono({ getPath: app.hono.getPath }).route("/api", app.hono);
      const client = await mounted(parent, transport);
      try {
        for (const path of ["/api/files/..%2F", "/api/files/a%FF", "/api/n/..%2Fx"]) {
          const res = await client.send(path);
          assert.equal(res.status, 404, path); // the parent's own answer: no route for that path
          await res.arrayBuffer();
        }
        assert.equal(await (await client.send("/api/n/x")).text(), "name:x");
      } finally {
        await client.close();
      }
    });
  });
}

describe("a catch-all in an app mounted under another: what the parent did not resolve", () => {
  it("refuses a '.' or '..' segment in the rest, which Thaw's own reading resolves", async () => {
    const app = await bootstrap({ controllers: [Patterned] });
    const parent = new Hono().route("/api", app.hono);
    for (
      const target of [
        "/api/files/a/../../secret",
        "/api/files/a/%2e%2e/%2E%2E/secret",
        "/api/files/./x",
        "/api/files/a/..",
      ]
    ) {
      const res = await parent.fetch(rawTarget(`http://localhost${target}`));
      assert.equal(res.status, 400, target);
      assert.match((await res.json()).error, /'\.' or '\.\.' segment/, target);
    }
    // Unmounted, the same target is resolved before routing.
    const direct = await app.fetch(rawTarget("http://localhost/files/a/../b"));
    assert.equal(await direct.text(), 'files:"/b"');
  });

  it("with allowEncodedSlash, takes a %2F as unmounted, refuses the rest as unmounted", async () => {
    const app = await bootstrap({ controllers: [Patterned], allowEncodedSlash: true });
    const parent = new Hono().route("/api", app.hono);
    for (const path of ["/files/a%2F..%2Fb", "/files/a%FF"]) {
      const direct = await call(app, "GET", path);
      const res = await parent.fetch(new Request(`http://localhost/api${path}`));
      assert.equal(res.status, direct.status, path);
      const body = (r: Response) => r.status === 200 ? r.text() : r.json().then((b) => b.error);
      assert.equal(await body(res), await body(direct), path);
    }
  });

  it("gives a refused rest to no error controller", async () => {
    const seen: unknown[] = [];
    @Component("errorController")
    class Errors implements ErrorController {
      handleError(...[request, , status]: Parameters<ErrorController["handleError"]>): void {
        seen.push([status.getValue(), request.getPathVariable("path")]);
      }
    }
    const app = await bootstrap({ controllers: [Patterned], components: [Errors] });
    const parent = new Hono().route("/api", app.hono);
    const res = await parent.fetch(new Request("http://localhost/api/files/..%2Fx"));
    assert.equal(res.status, 400);
    assert.deepEqual(seen, [[400, undefined]]);
  });
});

describe("the error path of a route whose regex did not hold", () => {
  it("gets no path variable in a 404 nor a 405", async () => {
    const seen: unknown[] = [];
    @Component("errorController")
    class Errors implements ErrorController {
      handleError(...[request, , status]: Parameters<ErrorController["handleError"]>): void {
        seen.push([status.getValue(), request.getPathVariable("id")]);
      }
    }
    @RestController()
    class Orders {
      @GetMapping("/orders/{id:\\d+}", PathVariable("id"))
      get(id: string): string {
        return id;
      }
      @PostMapping("/items/{id}", PathVariable("id"))
      post(id: string): string {
        return id;
      }
      @GetMapping("/items/{id:\\d+}", PathVariable("id"))
      item(id: string): string {
        return id;
      }
    }
    for (const middleware of [[], [async (_c: Context, next: Next) => await next()]]) {
      const app = await bootstrap({ controllers: [Orders], components: [Errors], middleware });
      assert.equal((await call(app, "GET", "/orders/abc")).status, 404);
      assert.equal((await call(app, "GET", "/items/abc")).status, 405);
      assert.deepEqual(seen.splice(0), [[404, undefined], [405, undefined]]);
    }
  });
});
