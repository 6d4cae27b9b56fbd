import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import {
  type Application,
  bootstrap,
  DefinitionError,
  GetMapping,
  HttpRequest,
  PathVariable,
  PostMapping,
  RequestBody,
  RequestHeader,
  RequestParam,
  RequestPart,
  RestController,
  type StandardSchemaV1,
} from "../../mod.ts";
import { call } from "../helpers.ts";

class Person {
  name = "";
  tags: string[] = [];
  #age = 0;
  set age(value: number) {
    if (typeof value !== "number") throw new TypeError("age");
    this.#age = value;
  }
  get age(): number {
    return this.#age;
  }
  get readOnly(): string {
    return "fixed";
  }
}

const PersonSchema = z.object({ name: z.string().min(1), age: z.number().int().nonnegative() });

@RestController()
class BindingController {
  @GetMapping("/int/{id}", PathVariable("id", Number))
  int(id: number) {
    return { id, type: typeof id };
  }
  @GetMapping("/bool/{flag}", PathVariable("flag", Boolean))
  bool(flag: boolean) {
    return { flag };
  }
  @GetMapping(
    "/params",
    RequestParam("q"),
    RequestParam("page", { type: Number, default: 1 }),
    RequestParam("sort", { required: false }),
    RequestParam("day", { type: (t: string) => new Date(t).toISOString(), required: false }),
  )
  params(q: string, page: number, sort: string | undefined, day: string | undefined) {
    return { q, page, sort: sort ?? null, day: day ?? null };
  }
  @GetMapping(
    "/header",
    RequestHeader("x-count", { type: Number }),
    RequestHeader("x-opt", { default: "none" }),
  )
  header(count: number, opt: string) {
    return { count, opt };
  }
  @PostMapping("/raw", RequestBody())
  raw(body: unknown) {
    return { body, proto: Object.getPrototypeOf(body) === Object.prototype };
  }
  @PostMapping("/person", RequestBody(Person))
  person(person: Person) {
    return {
      isPerson: person instanceof Person,
      name: person.name,
      age: person.age,
      tags: person.tags,
      polluted: ({} as Record<string, unknown>).polluted ?? null,
    };
  }
  @PostMapping("/schema", RequestBody(PersonSchema))
  schema(person: z.infer<typeof PersonSchema>) {
    return person;
  }
  @PostMapping("/numbered/{id}", RequestBody(), PathVariable("id", Number))
  numbered(body: unknown, id: number) {
    return { body, id };
  }
  @PostMapping("/request/{id}", HttpRequest, PathVariable("id"), RequestBody())
  request(request: HttpRequest, id: string, body: unknown) {
    return {
      method: request.getMethod(),
      path: request.getPath(),
      id,
      body,
      var: request.getPathVariable("id"),
    };
  }
}

let app: Application;
async function theApp(): Promise<Application> {
  return app ??= await bootstrap({ controllers: [BindingController], maxBodySize: 256 });
}

async function errorOf(res: Response): Promise<{ status: number; error: string }> {
  const body = await res.json();
  return { status: res.status, error: body.error };
}

describe("PathVariable", () => {
  it("converts integers and refuses anything else with 400", async () => {
    const a = await theApp();
    assert.deepEqual(await (await call(a, "GET", "/int/42")).json(), { id: 42, type: "number" });
    assert.deepEqual(await (await call(a, "GET", "/int/-7")).json(), { id: -7, type: "number" });
    for (const bad of ["abc", "1.5", "1e3", "0x10", "99999999999999999999", "%20"]) {
      const res = await call(a, "GET", `/int/${bad}`);
      assert.equal(res.status, 400, bad);
      assert.match((await errorOf(res)).error, /Path variable 'id' must be an integer/);
    }
  });

  it("converts booleans", async () => {
    const a = await theApp();
    assert.deepEqual(await (await call(a, "GET", "/bool/TRUE")).json(), { flag: true });
    assert.deepEqual(await (await call(a, "GET", "/bool/0")).json(), { flag: false });
    assert.equal((await call(a, "GET", "/bool/maybe")).status, 400);
  });

  it("a PathVariable without its {var} is a startup error", async () => {
    @RestController()
    class Wrong {
      // @ts-expect-error The compiler refuses it too; JavaScript has only the startup check.
      @GetMapping("/u/{id}", PathVariable("uid"))
      get(uid: string): string {
        return uid;
      }
    }
    await assert.rejects(
      bootstrap({ controllers: [Wrong] }),
      /PathVariable\("uid"\) has no \{uid\} in path "\/u\/\{id\}"/,
    );
  });

  it("a null type or options is refused where the binder is made, not taken as the default", () => {
    // As JavaScript may call them: no compiler stops the null.
    const untyped = (binder: unknown, ...args: unknown[]) => () =>
      (binder as (...args: unknown[]) => unknown)(...args);
    assert.throws(
      untyped(PathVariable, "id", null),
      /PathVariable\("id"\): type must be a function/,
    );
    for (const binder of [RequestParam, RequestHeader]) {
      assert.throws(untyped(binder, "q", null), /\("q"\): the options must be an object, got null/);
      assert.throws(
        untyped(binder, "q", { requried: false }),
        /\("q"\): unknown option "requried"/,
      );
    }
    assert.throws(
      untyped(RequestPart, "p", null),
      /RequestPart\("p"\): the options must be an object, got null/,
    );
  });

  it("a method with more arguments than binders is a startup error", async () => {
    @RestController()
    class Short {
      // @ts-expect-error The compiler refuses it too; JavaScript has only the startup check.
      @GetMapping("/s/{id}")
      get(id: string): string {
        return id;
      }
    }
    await assert.rejects(
      bootstrap({ controllers: [Short] }),
      (e: unknown) =>
        e instanceof DefinitionError &&
        /Short\.get .* takes 1 argument\(s\) but 0 binder\(s\)/.test(e.message),
    );
  });
});

describe("RequestParam and RequestHeader", () => {
  it("binds, defaults and converts", async () => {
    const a = await theApp();
    assert.deepEqual(await (await call(a, "GET", "/params?q=tea&page=3&day=2024-01-02")).json(), {
      q: "tea",
      page: 3,
      sort: null,
      day: "2024-01-02T00:00:00.000Z",
    });
    assert.deepEqual(await (await call(a, "GET", "/params?q=")).json(), {
      q: "",
      page: 1,
      sort: null,
      day: null,
    });
  });

  it("a missing required parameter or a bad value is 400", async () => {
    const a = await theApp();
    assert.deepEqual(await errorOf(await call(a, "GET", "/params")), {
      status: 400,
      error: "Request parameter 'q' is required",
    });
    assert.match(
      (await errorOf(await call(a, "GET", "/params?q=a&page=x"))).error,
      /'page' must be an integer/,
    );
    assert.match(
      (await errorOf(await call(a, "GET", "/params?q=a&day=never"))).error,
      /Request parameter 'day' is invalid \("never"\)/,
    );
  });

  it("binds headers", async () => {
    const a = await theApp();
    const res = await call(a, "GET", "/header", { headers: { "x-count": "5" } });
    assert.deepEqual(await res.json(), { count: 5, opt: "none" });
    assert.equal((await call(a, "GET", "/header")).status, 400);
  });

  it("echoes at most a little of a long bad value", async () => {
    const a = await theApp();
    const { error } = await errorOf(await call(a, "GET", `/params?q=a&page=${"9x".repeat(500)}`));
    assert.ok(error.length < 150, error);
  });
});

describe("RequestBody", () => {
  const json = { "content-type": "application/json" };

  it("passes parsed JSON, accepting +json types", async () => {
    const a = await theApp();
    const res = await call(a, "POST", "/raw", {
      body: '{"a":[1]}',
      headers: { "content-type": "application/vnd.x+json; charset=utf-8" },
    });
    assert.deepEqual(await res.json(), { body: { a: [1] }, proto: true });
  });

  it("instantiates a class with the body's own properties, through setters", async () => {
    const a = await theApp();
    const res = await call(a, "POST", "/person", { json: { name: "Ada", age: 36, tags: ["x"] } });
    assert.deepEqual(await res.json(), {
      isPerson: true,
      name: "Ada",
      age: 36,
      tags: ["x"],
      polluted: null,
    });
    const bad = await call(a, "POST", "/person", { json: { age: "old" } });
    assert.deepEqual(await errorOf(bad), {
      status: 400,
      error: 'Request body property "age" cannot be set on Person',
    });
    const ro = await call(a, "POST", "/person", { json: { readOnly: "x" } });
    assert.equal(ro.status, 400);
    for (const notObject of ["[1]", "3", "null", '"s"']) {
      const res = await call(a, "POST", "/person", { body: notObject, headers: json });
      assert.deepEqual(await errorOf(res), {
        status: 400,
        error: "Request body must be a JSON object for Person",
      });
    }
  });

  it("a __proto__ key changes nothing, at any depth or spelling", async () => {
    const a = await theApp();
    const hostile =
      '{"name":"x","__proto__":{"polluted":1,"age":99},"tags":{"__proto__":{"polluted":2}}}';
    const res = await call(a, "POST", "/person", { body: hostile, headers: json });
    assert.deepEqual(await res.json(), {
      isPerson: true,
      name: "x",
      age: 0,
      tags: {},
      polluted: null,
    });
    const escaped = '{"\\u005f_proto__":{"polluted":3},"ok":1}';
    assert.deepEqual(
      await (await call(a, "POST", "/raw", { body: escaped, headers: json })).json(),
      {
        body: { ok: 1 },
        proto: true,
      },
    );
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });

  it("validates with a Standard Schema (zod) and returns its issues in a 400", async () => {
    const a = await theApp();
    assert.deepEqual(
      await (await call(a, "POST", "/schema", { json: { name: "Ada", age: 3, extra: 1 } })).json(),
      {
        name: "Ada",
        age: 3,
      },
    );
    const res = await call(a, "POST", "/schema", { json: { name: "", age: -1 } });
    assert.equal(res.status, 400);
    const body = await res.json();
    assert.equal(body.error, "Request body failed validation");
    assert.deepEqual(body.issues.map((i: { path: string[] }) => i.path), [["name"], ["age"]]);
    assert.ok(
      body.issues.every((i: { message: string }) =>
        typeof i.message === "string" && i.message !== ""
      ),
    );
  });

  it("accepts any Standard Schema, including an asynchronous one", async () => {
    const upper: StandardSchemaV1<unknown, string> = {
      "~standard": {
        version: 1,
        vendor: "test",
        validate: (v) =>
          Promise.resolve(
            typeof v === "string"
              ? { value: v.toUpperCase() }
              : { issues: [{ message: "not a string" }] },
          ),
      },
    };
    @RestController()
    class Upper {
      @PostMapping("/upper", RequestBody(upper))
      up(s: string): string {
        return s;
      }
    }
    const a = await bootstrap({ controllers: [Upper] });
    assert.equal(await (await call(a, "POST", "/upper", { json: "abc" })).text(), "ABC");
    const res = await call(a, "POST", "/upper", { json: 1 });
    assert.deepEqual((await res.json()).issues, [{ message: "not a string", path: [] }]);
  });

  it("malformed JSON is 400", async () => {
    const a = await theApp();
    for (const body of ['{"a":', "{'a':1}", "nul", '{"a":1}}']) {
      const { status, error } = await errorOf(
        await call(a, "POST", "/raw", { body, headers: json }),
      );
      assert.equal(status, 400);
      assert.match(error, /^Malformed JSON in request body: /);
    }
  });

  it("a missing or empty body is 400", async () => {
    const a = await theApp();
    assert.deepEqual(await errorOf(await call(a, "POST", "/raw", { headers: json })), {
      status: 400,
      error: "Required request body is missing",
    });
    assert.equal((await call(a, "POST", "/raw", { body: "  \n", headers: json })).status, 400);
  });

  it("a body that is not JSON is 415", async () => {
    const a = await theApp();
    for (const type of ["text/plain", "application/x-www-form-urlencoded", "application/jsonp"]) {
      const res = await call(a, "POST", "/raw", {
        body: '{"a":1}',
        headers: { "content-type": type },
      });
      assert.equal(res.status, 415, type);
    }
    const none = await call(a, "POST", "/raw", { body: new Uint8Array([123, 125]) });
    assert.deepEqual(await errorOf(none), {
      status: 415,
      error: "Content-Type must be application/json, got none",
    });
  });

  it("a body over the limit is 413, whether declared or streamed", async () => {
    const a = await theApp();
    const big = JSON.stringify({ a: "x".repeat(300) });
    assert.deepEqual(await errorOf(await call(a, "POST", "/raw", { body: big, headers: json })), {
      status: 413,
      error: "Request body exceeds 256 bytes",
    });
    const stream = new Blob([big]).stream();
    const res = await a.fetch(
      new Request(
        "http://localhost/raw",
        { method: "POST", body: stream, headers: json, duplex: "half" } as RequestInit,
      ),
    );
    assert.equal(res.status, 413);
  });

  it("binds the body in any position, and reads no body for a request refused on its path", async () => {
    const a = await theApp();
    const ok = await call(a, "POST", "/numbered/7", { json: { a: 1 } });
    assert.deepEqual(await ok.json(), { body: { a: 1 }, id: 7 });
    const request = new Request("http://localhost/numbered/x", {
      method: "POST",
      body: '{"a":',
      headers: json,
    });
    const refused = await a.fetch(request);
    assert.deepEqual(await errorOf(refused), {
      status: 400,
      error: "Path variable 'id' must be an integer, got \"x\"",
    });
    assert.equal(request.bodyUsed, false);
  });

  it("gives the whole request as HttpRequest, sharing the body", async () => {
    const a = await theApp();
    const res = await call(a, "POST", "/request/9?x=1", { json: { a: 1 } });
    assert.deepEqual(await res.json(), {
      method: "POST",
      path: "/request/9",
      id: "9",
      body: { a: 1 },
      var: "9",
    });
  });

  it("refuses two bodies and a foreign binder at startup", async () => {
    @RestController()
    class TwoBodies {
      @PostMapping("/two", RequestBody(), RequestBody())
      two(_a: unknown, _b: unknown): void {}
    }
    await assert.rejects(
      bootstrap({ controllers: [TwoBodies] }),
      /only one RequestBody\(\) binder/,
    );
    @RestController()
    class Foreign {
      // @ts-expect-error: a string is not a binder
      @GetMapping("/f", "id")
      f(_id: unknown): void {}
    }
    await assert.rejects(bootstrap({ controllers: [Foreign] }), /argument 1: a binder must be/);
  });

  it("a binder copied with its options changed reads as the copy says", async () => {
    @RestController()
    class Copies {
      @GetMapping("/c/{id}", { ...PathVariable("id", Number) }, {
        ...RequestParam("q"),
        required: false,
      }, Object.assign({}, RequestHeader("x-tag", { required: false })))
      get(id: number, q: string | undefined, tag: string | undefined) {
        return { id, q: q ?? null, tag: tag ?? null };
      }
    }
    const app = await bootstrap({ controllers: [Copies] });
    assert.deepEqual(await (await call(app, "GET", "/c/7")).json(), { id: 7, q: null, tag: null });
    assert.deepEqual(
      await (await call(app, "GET", "/c/7?q=a", { headers: { "x-tag": "t" } })).json(),
      { id: 7, q: "a", tag: "t" },
    );
    assert.equal((await call(app, "GET", "/c/x")).status, 400);
  });

  it("a descriptor written by hand is refused at start-up, saying what to call instead", async () => {
    @RestController()
    class ByHand {
      @GetMapping("/h/{id}", { kind: "path", name: "id", type: String })
      get(id: unknown) {
        return String(id);
      }
    }
    await assert.rejects(
      bootstrap({ controllers: [ByHand] }),
      (error: Error) => {
        assert.ok(error instanceof DefinitionError);
        assert.match(
          error.message,
          /ByHand\.get .*argument 1: .*kind "path" .*not made by PathVariable\(\).*call PathVariable\(\)/,
        );
        return true;
      },
    );
  });
});
