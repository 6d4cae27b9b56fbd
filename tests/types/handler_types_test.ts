// The binders are a handler's signature: this file is checked by `tsc` (tests/types/tsconfig.json,
// the build's strict settings) and by `deno check`. Each wrong use carries `@ts-expect-error`, so
// the check fails if the compiler stops refusing it; `Equal` pins each inferred type exactly.
// The test at the end runs the correct controllers, so the types are those the values have.

import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import { cors } from "hono/cors";
import {
  Autowired,
  bootstrap,
  type Class,
  Component,
  DeleteMapping,
  ExceptionHandler,
  GetMapping,
  HttpRequest,
  type Middleware,
  type PartOptions,
  PatchMapping,
  PathVariable,
  PostMapping,
  PutMapping,
  RequestBody,
  RequestHeader,
  RequestParam,
  RequestPart,
  RestController,
  Service,
  UseMiddleware,
  Value,
  type ValueOptions,
} from "../../mod.ts";
import type { BinderValue } from "../../types.ts";

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true
  : false;
type Gives<B> = BinderValue<B>;
const yes = <T extends true>(): T => true as T;

const Todo = z.object({ title: z.string(), done: z.boolean().default(false) });
const Stamp = z.string().transform((text) => new Date(text));

class NewUser {
  name = "";
}

describe("binder types", () => {
  it("each binder gives the type its arguments say", () => {
    yes<Equal<Gives<ReturnType<typeof PathVariable<"id">>>, string>>();
    const id = PathVariable("id", Number);
    yes<Equal<Gives<typeof id>, number>>();
    const flag = PathVariable("flag", Boolean);
    yes<Equal<Gives<typeof flag>, boolean>>();
    const text = PathVariable("text", String);
    yes<Equal<Gives<typeof text>, string>>();
    const day = PathVariable("day", (t: string) => new Date(t));
    yes<Equal<Gives<typeof day>, Date>>();

    const q = RequestParam("q");
    yes<Equal<Gives<typeof q>, string>>();
    const maybe = RequestParam("q", { required: false });
    yes<Equal<Gives<typeof maybe>, string | undefined>>();
    const page = RequestParam("page", { type: Number, default: 1 });
    yes<Equal<Gives<typeof page>, number>>();
    const size = RequestParam("size", { type: Number, required: false });
    yes<Equal<Gives<typeof size>, number | undefined>>();
    const sort = RequestParam("sort", { default: "name" });
    yes<Equal<Gives<typeof sort>, string>>();
    const since = RequestParam("since", { type: (t: string) => new Date(t), required: false });
    yes<Equal<Gives<typeof since>, Date | undefined>>();
    const trace = RequestHeader("x-trace", { required: false });
    yes<Equal<Gives<typeof trace>, string | undefined>>();
    const retries = RequestHeader("x-retries", { type: Number });
    yes<Equal<Gives<typeof retries>, number>>();

    const any = RequestBody();
    yes<Equal<Gives<typeof any>, unknown>>();
    const user = RequestBody(NewUser);
    yes<Equal<Gives<typeof user>, NewUser>>();
    const todo = RequestBody(Todo);
    yes<Equal<Gives<typeof todo>, { title: string; done: boolean }>>();
    const stamp = RequestBody(Stamp);
    yes<Equal<Gives<typeof stamp>, Date>>();

    const part = RequestPart("p");
    yes<Equal<Gives<typeof part>, File | string>>();
    const file = RequestPart("f", { type: File });
    yes<Equal<Gives<typeof file>, File>>();
    const count = RequestPart("n", { type: Number, required: false });
    yes<Equal<Gives<typeof count>, number | undefined>>();
    const optionalFile = RequestPart("f", { type: File, required: false });
    yes<Equal<Gives<typeof optionalFile>, File | undefined>>();
    yes<Equal<Gives<typeof HttpRequest>, HttpRequest>>();
  });

  it("options held in a variable give what they may give at run time", () => {
    const widened: ValueOptions = { required: false };
    const fromVariable = RequestParam("q", widened);
    yes<Equal<Gives<typeof fromVariable>, unknown>>();
    const flag = Math.random() > 2;
    const maybeRequired = RequestParam("q", { required: flag });
    yes<Equal<Gives<typeof maybeRequired>, string | undefined>>();
    const required = RequestParam("q", { required: true });
    yes<Equal<Gives<typeof required>, string>>();
    const noDefault = RequestParam("q", { default: undefined });
    yes<Equal<Gives<typeof noDefault>, string | undefined>>();
    const partWidened: PartOptions = {};
    const part = RequestPart("p", partWidened);
    yes<Equal<Gives<typeof part>, unknown>>();
  });
});

const widenedOptions: ValueOptions = { required: false };
const spreadBinders = [PathVariable("id", Number)];
const base: string = "/orgs/{org}";

@RestController()
class Typed {
  @GetMapping("/todos/{id}", PathVariable("id", Number))
  one(id: number): { id: number } {
    return { id };
  }

  // A parameter may take more than its binder gives.
  @GetMapping("/wide/{id}", PathVariable("id", Number))
  wide(id: number | string): string {
    return typeof id;
  }

  @PostMapping("/todos", RequestBody(Todo), RequestHeader("x-trace", { required: false }))
  create(todo: z.output<typeof Todo>, trace: string | undefined): object {
    return { ...todo, trace: trace ?? null };
  }

  @PutMapping("/users/{id:\\d+}", PathVariable("id", Number), RequestBody(NewUser))
  replace(id: number, user: NewUser): object {
    return { id, name: user.name, isUser: user instanceof NewUser };
  }

  @GetMapping("/files/{*path}", PathVariable("path"))
  files(path: string): string {
    return path;
  }

  @PatchMapping("/q", RequestParam("page", { type: Number, default: 1 }), HttpRequest)
  page(page: number, request: HttpRequest): object {
    return { page, path: request.getPath() };
  }

  // A rest parameter takes every binder.
  @DeleteMapping("/rest/{a}/{b}", PathVariable("a"), PathVariable("b", Number))
  rest(...all: [string, number]): object {
    return { all };
  }

  @GetMapping("/none")
  none(): string {
    return "none";
  }

  // An optional parameter, or one with a default, that a binder fills.
  @GetMapping("/page", RequestParam("page", { type: Number, required: false }))
  withDefault(page = 1): number {
    return page;
  }
  @GetMapping("/maybe", RequestParam("q", { required: false }))
  optional(q?: string): string {
    return q ?? "none";
  }

  // Binders in an array: each parameter takes every binder's type.
  @GetMapping("/spread/{id}", ...spreadBinders)
  spread(id: number): number {
    return id;
  }

  // A path built from a string the compiler cannot read is left to the startup check.
  @GetMapping(`${base}/members/{id}`, PathVariable("org"), PathVariable("id"))
  member(org: string, id: string): string {
    return `${org}:${id}`;
  }

  // A long path stays within the compiler's depth limit.
  @GetMapping(
    "/{v0}/{v1}/{v2}/{v3}/{v4}/{v5}/{v6}/{v7}/{v8}/{v9}/{v10}/{v11}/{v12}/{v13}/{v14}/{v15}/{v16}/{v17}/{v18}/{v19}/{v20}/{v21}/{v22}/{v23}/{v24}/{v25}/{v26}/{v27}/{v28}/{v29}/{v30}/{v31}/{v32}/{v33}/{v34}/{v35}/{v36}/{v37}/{v38}/{v39}/{v40}/{v41}/{v42}/{v43}/{v44}/{v45}/{v46}/{v47}/{v48}/{v49}/{v50}/{v51}/{v52}/{v53}/{v54}/{v55}/{v56}/{v57}/{v58}/{v59}",
    PathVariable("v59"),
  )
  long(v: string): string {
    return v;
  }

  // A name the compiler cannot see (a variable of the class's prefix) is left to startup.
  @GetMapping("/runtime/{x}", PathVariable("x" as string))
  runtime(x: string): string {
    return x;
  }
}

@RestController()
class Wrong {
  // @ts-expect-error The schema gives `{ title, done }`, not a number.
  @PostMapping("/a", RequestBody(Todo))
  a(_input: number): void {}

  // @ts-expect-error `Number` gives a number; the method takes a string.
  @GetMapping("/b/{id}", PathVariable("id", Number))
  b(id: string): string {
    return id.toUpperCase();
  }

  // @ts-expect-error Two binders, one parameter.
  @GetMapping("/c", RequestParam("q"), RequestParam("r"))
  c(_only: string): void {}

  // @ts-expect-error One binder, two parameters.
  @GetMapping("/d", RequestParam("q"))
  d(_q: string, _r: string): void {}

  // @ts-expect-error An optional parameter without a binder is a parameter without a binder.
  @GetMapping("/e", RequestParam("q"))
  e(_q: string, _r?: string): void {}

  // @ts-expect-error No binder, one parameter.
  @GetMapping("/f")
  f(_id: string): void {}

  // @ts-expect-error `{idd}` is not a variable of the path.
  @GetMapping("/todos/{id}", PathVariable("idd"))
  g(_id: string): void {}

  // @ts-expect-error Not required, so the value may be `undefined`.
  @GetMapping("/h", RequestParam("q", { required: false }))
  h(_q: string): void {}

  // @ts-expect-error A part is a file or a text unless its type says which.
  @PostMapping("/i", RequestPart("p"))
  i(_p: string): void {}

  // @ts-expect-error `RequestBody()` gives `unknown`: narrow it, or give a class or a schema.
  @PutMapping("/j", RequestBody())
  j(_body: { name: string }): void {}

  // @ts-expect-error The request is an `HttpRequest`.
  @PatchMapping("/k", HttpRequest)
  k(_request: string): void {}

  // @ts-expect-error The rest parameter takes numbers; the binder gives a string.
  @DeleteMapping("/l/{a}", PathVariable("a"))
  l(..._all: number[]): void {}

  // @ts-expect-error Options in a variable may say `required: false`: the value may be undefined.
  @GetMapping("/n", RequestParam("q", widenedOptions))
  n(q: string): string {
    return q.toUpperCase();
  }

  // @ts-expect-error Binders in an array (not a tuple): each parameter must take every binder's type.
  @GetMapping("/o/{id}", ...spreadBinders)
  o(id: string): string {
    return id.padStart(5, "0");
  }

  // @ts-expect-error A third parameter of an exception handler is always undefined.
  @ExceptionHandler(Error)
  p(_error: Error, _request: HttpRequest, _extra: string): void {}

  // @ts-expect-error A constrained variable is named without its regex.
  @GetMapping("/m/{id:\\d+}", PathVariable("id:\\d+"))
  m(_id: string): void {}
}

@Service()
class Clock {
  now(): number {
    return 0;
  }
}
interface Timer {
  now(): number;
}
interface Stopwatch extends Clock {
  lap: number;
}

@Service()
class Cache<T> {
  items: T[] = [];
}

@Service()
class Injected {
  @Autowired(Clock)
  clock!: Clock;
  @Autowired(Clock)
  timer!: Timer;
  @Autowired("clock")
  byName!: string; // a name: the compiler cannot know the bean's type
  // @ts-expect-error A Clock is not a string.
  @Autowired(Clock)
  wrong!: string;
  // @ts-expect-error A Clock bean need not be a Stopwatch.
  @Autowired(Clock)
  narrower!: Stopwatch;

  // A generic class's bean has `unknown` type arguments; a cast states the ones meant.
  @Autowired(Cache as Class<Cache<string>>)
  names!: Cache<string>;
  // @ts-expect-error Without the cast, a Cache<unknown> is not a Cache<string>.
  @Autowired(Cache)
  uncast!: Cache<string>;

  @Value("${app.port:8080}", { type: Number })
  port!: number;
  @Value("${app.debug:false}", { type: Boolean })
  debug!: boolean;
  @Value("${app.flag:true}", { type: Math.random() > 2 ? Number : Boolean })
  either!: number | boolean;
  @Value("${app.name:thaw}")
  name!: string; // without a type: as the configuration holds it
  // @ts-expect-error `type: Number` gives a number.
  @Value("${app.port:8080}", { type: Number })
  portText!: string;
}

class Conflict extends Error {
  readonly conflict = true;
}
class Gone extends Error {
  readonly gone = true;
}

@RestController()
class Handlers {
  @ExceptionHandler(Conflict)
  conflict(error: Conflict, request: HttpRequest): string {
    return `${error.conflict} ${request.getPath()}`;
  }
  @ExceptionHandler(Conflict, Gone)
  either(error: Conflict | Gone): string {
    return error.message;
  }
  @ExceptionHandler(Gone)
  wider(error: Error): string {
    return error.message;
  }
  @ExceptionHandler(Gone)
  nothing(): string {
    return "gone";
  }
  // @ts-expect-error A Gone is not a Conflict.
  @ExceptionHandler(Conflict, Gone)
  narrow(_error: Conflict): void {}
  // @ts-expect-error The second parameter is the request.
  @ExceptionHandler(Gone)
  second(_error: Gone, _request: string): void {}
}

@Component()
class Stamped implements Middleware {
  async handle(_c: unknown, next: () => Promise<void>): Promise<void> {
    await next();
  }
}
class NotMiddleware {
  run(): void {}
}

@RestController()
@UseMiddleware(cors(), Stamped)
class Guarded {
  @GetMapping("/guarded")
  @UseMiddleware(cors())
  get(): string {
    return "ok";
  }
}

// @ts-expect-error A class without `handle` is not a middleware.
@UseMiddleware(NotMiddleware)
class NotGuarded {}

describe("typed handlers at run time", () => {
  it("each argument arrives with the type its binder declares", async () => {
    const app = await bootstrap({ controllers: [Typed], components: [Clock, Cache, Injected] });
    const json = async (method: string, path: string, body?: unknown) => {
      const init: RequestInit = { method };
      if (body !== undefined) {
        init.body = JSON.stringify(body);
        init.headers = { "content-type": "application/json" };
      }
      const res = await app.fetch(new Request(`http://localhost${path}`, init));
      assert.equal(res.status, 200, `${method} ${path}`);
      return res.headers.get("content-type")?.startsWith("application/json")
        ? await res.json()
        : await res.text();
    };
    assert.deepEqual(await json("GET", "/todos/7"), { id: 7 });
    assert.equal(await json("GET", "/wide/7"), "number");
    assert.deepEqual(await json("POST", "/todos", { title: "milk" }), {
      title: "milk",
      done: false,
      trace: null,
    });
    assert.deepEqual(await json("PUT", "/users/3", { name: "ada" }), {
      id: 3,
      name: "ada",
      isUser: true,
    });
    assert.deepEqual(await json("PATCH", "/q"), { page: 1, path: "/q" });
    assert.deepEqual(await json("DELETE", "/rest/x/2"), { all: ["x", 2] });
    assert.equal(await json("GET", "/runtime/y"), "y");
    assert.equal(await json("GET", "/page"), 1);
    assert.equal(await json("GET", "/page?page=3"), 3);
    assert.equal(await json("GET", "/maybe"), "none");
    assert.equal(await json("GET", "/spread/9"), 9);
    assert.equal(await json("GET", "/orgs/o1/members/m2"), "o1:m2");
    const injected = app.getBean(Injected);
    assert.equal(injected.clock, app.getBean(Clock));
    assert.equal(injected.port, 8080);
    assert.equal(injected.debug, false);
    assert.equal(injected.name, "thaw");
  });

  it("JavaScript, without the compiler, still meets the startup checks", async () => {
    // tests/web/binding_test.ts checks each startup message; here, that one is still reached.
    await assert.rejects(bootstrap({ controllers: [Wrong] }), /^DefinitionError: Wrong\.\w+ /);
    const guarded = await bootstrap({ controllers: [Guarded], components: [Stamped] });
    const res = await guarded.fetch(
      new Request("http://localhost/guarded", { headers: { origin: "https://a.example" } }),
    );
    assert.equal(await res.text(), "ok");
    assert.equal(res.headers.get("access-control-allow-origin"), "*");
    // Compile-time fixtures only: their handlers overlap on purpose.
    assert.equal(typeof Handlers, "function");
    assert.equal(typeof NotGuarded, "function");
  });
});
