import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  bootstrap,
  HttpException,
  HttpRequest,
  PostMapping,
  RequestBody,
  RestController,
} from "../../mod.ts";
import { call, memoryLogger } from "../helpers.ts";
import { User } from "../../examples/users/src/user.ts";

const json = { "content-type": "application/json" };

class Account {
  name = "";
  onSave = (): string => "saved";
  #email = "";
  set email(value: string) {
    this.#email = String(value).toLowerCase();
  }
  get email(): string {
    return this.#email;
  }
  get label(): string {
    return `${this.name} <${this.#email}>`;
  }
  describe(): string {
    return this.label;
  }
}

// Fields declared without an initializer exist on the instance under ES2022 class fields (Deno,
// Bun, tsx and tsc from target ES2022 alike), so they bind like any other.
class Declared {
  name!: string;
  age?: number;
}

@RestController()
class Hostile {
  @PostMapping("/declared", RequestBody(Declared))
  declared(d: Declared) {
    return { name: d.name, age: d.age ?? null, own: Object.keys(d) };
  }
  @PostMapping("/user", RequestBody(User))
  user(user: User) {
    return { email: user.getEmail(), name: user.name };
  }
  @PostMapping("/account", RequestBody(Account))
  account(account: Account) {
    return {
      name: account.name,
      email: account.email,
      describe: account.describe(),
      onSave: account.onSave(),
      own: Object.keys(account),
    };
  }
  @PostMapping("/merge", HttpRequest)
  async merge(request: HttpRequest) {
    // What a careless handler does with request.json(): a deep merge into a fresh object.
    const merge = (into: Record<string, unknown>, from: unknown): void => {
      if (typeof from !== "object" || from === null) return;
      for (const [k, v] of Object.entries(from)) {
        if (typeof v === "object" && v !== null) {
          into[k] ??= {};
          merge(into[k] as Record<string, unknown>, v);
        } else into[k] = v;
      }
    };
    const target: Record<string, unknown> = {};
    merge(target, await request.json());
    return {
      polluted: ({} as Record<string, unknown>).polluted ?? null,
      keys: Object.keys(target),
    };
  }
  @PostMapping("/any", RequestBody())
  any(body: unknown) {
    return { ok: Array.isArray(body) || typeof body === "object" };
  }
}

async function errorOf(res: Response): Promise<{ status: number; error: string }> {
  return { status: res.status, error: (await res.json()).error };
}

describe("RequestBody(Class): what a body may set", () => {
  it("a key naming a method, or a getter without a setter, is refused with 400 and replaces nothing", async () => {
    const app = await bootstrap({ controllers: [Hostile] });
    for (const key of ["getEmail", "setId"]) {
      const res = await call(app, "POST", "/user", { json: { [key]: 1, email: "a@b" } });
      assert.deepEqual(await errorOf(res), {
        status: 400,
        error: `Request body property "${key}" is not a settable property of User`,
      });
    }
    for (const key of ["describe", "label", "onSave"]) {
      const res = await call(app, "POST", "/account", { json: { [key]: "x" } });
      assert.deepEqual(await errorOf(res), {
        status: 400,
        error: `Request body property "${key}" is not a settable property of Account`,
      });
    }
  });

  it("declared fields and setters are set; unknown keys and Object.prototype's names are ignored", async () => {
    const app = await bootstrap({ controllers: [Hostile] });
    const res = await call(app, "POST", "/account", {
      json: {
        name: "Ada",
        email: "ADA@X",
        extra: 1,
        constructor: 2,
        toString: 3,
        hasOwnProperty: 4,
      },
    });
    assert.deepEqual(await res.json(), {
      name: "Ada",
      email: "ada@x",
      describe: "Ada <ada@x>",
      onSave: "saved",
      own: ["name", "onSave"],
    });
    const declared = await call(app, "POST", "/declared", { json: { name: "Cy", age: 3, x: 1 } });
    assert.deepEqual(await declared.json(), { name: "Cy", age: 3, own: ["name", "age"] });
    const user = await call(app, "POST", "/user", { json: { name: "Bo", email: "bo@x" } });
    assert.deepEqual(await user.json(), { email: "bo@x", name: "Bo" });
  });
});

describe("HttpRequest.json()", () => {
  it("drops __proto__ keys as RequestBody does: a deep merge of it pollutes nothing", async () => {
    const app = await bootstrap({ controllers: [Hostile] });
    for (
      const body of ['{"__proto__":{"polluted":1},"a":1}', '{"\\u005f_proto__":{"polluted":2}}']
    ) {
      const res = await call(app, "POST", "/merge", { body, headers: json });
      const answer = await res.json();
      assert.equal(answer.polluted, null, body);
      assert.equal(({} as Record<string, unknown>).polluted, undefined);
    }
  });

  it("answers malformed JSON with a 400 HttpException, not a SyntaxError", async () => {
    const request = new HttpRequest(new Request("http://x/", { method: "POST", body: "{" }));
    await assert.rejects(
      request.json(),
      (e: unknown) => e instanceof HttpException && e.status.getValue() === 400,
    );
  });
});

describe("JSON nesting depth", () => {
  const deep = (n: number, inner = "1") => "[".repeat(n) + inner + "]".repeat(n);

  it("accepts 512 levels and refuses 513, with or without a \\u escape", async () => {
    const app = await bootstrap({ controllers: [Hostile] });
    for (const inner of ["1", '"\\u0041"', '{"__proto__":1}']) {
      const ok = await call(app, "POST", "/any", { body: deep(511, inner), headers: json });
      assert.equal(ok.status, 200, `511 + ${inner}`);
      const bad = await call(app, "POST", "/any", { body: deep(513, inner), headers: json });
      assert.deepEqual(await errorOf(bad), {
        status: 400,
        error: "Malformed JSON in request body: nested deeper than 512 levels",
      });
    }
  });

  it("refuses 100,000 levels the same way, never with a stack overflow", async () => {
    const logger = memoryLogger();
    const app = await bootstrap({ controllers: [Hostile], maxBodySize: 1 << 20, logger });
    for (const inner of ["1", '"\\u0041"']) {
      const res = await call(app, "POST", "/any", { body: deep(100_000, inner), headers: json });
      assert.deepEqual(await errorOf(res), {
        status: 400,
        error: "Malformed JSON in request body: nested deeper than 512 levels",
      });
      const viaRequest = new HttpRequest(
        new Request("http://x/", { method: "POST", body: deep(100_000, inner) }),
        { maxBodySize: 1 << 20 },
      );
      await assert.rejects(viaRequest.json(), (e: unknown) => e instanceof HttpException);
    }
    assert.deepEqual(logger.lines, []);
  });
});

describe("requests without a usable body", () => {
  it("no body and no Content-Type is 400; a body without a JSON type is 415; a comma in it is 400", async () => {
    const app = await bootstrap({ controllers: [Hostile] });
    assert.deepEqual(await errorOf(await call(app, "POST", "/any")), {
      status: 400,
      error: "Required request body is missing",
    });
    assert.deepEqual(
      await errorOf(await call(app, "POST", "/any", { headers: { "content-length": "0" } })),
      { status: 400, error: "Required request body is missing" },
    );
    const typed = await call(app, "POST", "/any", {
      body: "{}",
      headers: { "content-type": "text/plain" },
    });
    assert.equal(typed.status, 415);
    const twice = await call(app, "POST", "/any", {
      body: "{}",
      headers: { "content-type": "application/json, text/plain" },
    });
    assert.deepEqual(await errorOf(twice), {
      status: 400,
      error: 'Content-Type must be given once, got "application/json, text/plain"',
    });
    // A quoted comma cannot be told from two fields joined, each with an open quote.
    for (
      const type of [
        'application/json; profile="a,b"',
        'application/json; a=", text/html; b="',
      ]
    ) {
      const joined = await call(app, "POST", "/any", {
        body: "{}",
        headers: { "content-type": type },
      });
      assert.deepEqual(await errorOf(joined), {
        status: 400,
        error: `Content-Type must be given once, got ${JSON.stringify(type)}`,
      });
    }
  });

  it("a body stream that fails mid-read is a 400, and nothing is logged", async () => {
    const logger = memoryLogger();
    const app = await bootstrap({ controllers: [Hostile], logger });
    let sent = false;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (!sent) {
          sent = true;
          controller.enqueue(new TextEncoder().encode('{"a":'));
        } else controller.error(new Error("connection reset by peer"));
      },
    });
    const res = await app.fetch(
      new Request("http://x/any", {
        method: "POST",
        body,
        headers: json,
        duplex: "half",
      } as RequestInit),
    );
    assert.deepEqual(await errorOf(res), {
      status: 400,
      error: "Request body ended before it was complete",
    });
    assert.deepEqual(logger.lines, []);
  });

  it("a body without Content-Type whose stream fails while it is looked at is 415, not a 500", async () => {
    const logger = memoryLogger();
    const app = await bootstrap({ controllers: [Hostile], logger });
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        controller.error(new Error("connection reset by peer"));
      },
    });
    const res = await app.fetch(
      new Request("http://x/any", { method: "POST", body, duplex: "half" } as RequestInit),
    );
    assert.deepEqual(await errorOf(res), {
      status: 415,
      error: "Content-Type must be application/json, got none",
    });
    assert.deepEqual(logger.lines, []);
  });

  it("a body already read, without Content-Type, is 415, not a 500", async () => {
    const app = await bootstrap({ controllers: [Hostile], logger: memoryLogger() });
    const request = new Request("http://x/any", { method: "POST", body: "{}" });
    request.headers.delete("content-type");
    await request.text();
    const res = await app.fetch(request);
    assert.equal(res.status, 415);
  });
});
