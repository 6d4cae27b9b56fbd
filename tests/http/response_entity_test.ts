import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { HttpStatus, ResponseEntity } from "../../mod.ts";

describe("ResponseEntity factories", () => {
  const cases: [string, () => ResponseEntity, number][] = [
    ["ok", () => ResponseEntity.ok(), 200],
    ["created", () => ResponseEntity.created("/x"), 201],
    ["accepted", () => ResponseEntity.accepted(), 202],
    ["noContent", () => ResponseEntity.noContent(), 204],
    ["badRequest", () => ResponseEntity.badRequest(), 400],
    ["unauthorized", () => ResponseEntity.unauthorized(), 401],
    ["notFound", () => ResponseEntity.notFound(), 404],
    ["unprocessableEntity", () => ResponseEntity.unprocessableEntity(), 422],
    ["status(HttpStatus)", () => ResponseEntity.status(HttpStatus.CONFLICT), 409],
    ["status(number)", () => ResponseEntity.status(599), 599],
  ];
  for (const [name, make, code] of cases) {
    it(`${name} gives ${code}`, () => {
      assert.equal(make().getStatusCode(), code);
      assert.equal(make().toResponse().status, code);
    });
  }

  it("created sets Location", () => {
    assert.equal(
      ResponseEntity.created("/users/9").toResponse().headers.get("location"),
      "/users/9",
    );
  });

  it("refuses statuses a response cannot have", () => {
    assert.throws(() => ResponseEntity.status(HttpStatus.CONTINUE), RangeError);
    assert.throws(() => ResponseEntity.status(600), /200 to 599/);
    assert.throws(() => ResponseEntity.ok().withStatusCode(42.5), RangeError);
  });
});

describe("ResponseEntity builders", () => {
  it("withJson serialises and sets the type", async () => {
    const res = ResponseEntity.ok().withJson({ a: [1, "x"] }).toResponse();
    assert.equal(res.headers.get("content-type"), "application/json");
    assert.deepEqual(await res.json(), { a: [1, "x"] });
  });

  it("withXml serialises with a library, escaping text", async () => {
    const res = ResponseEntity.ok().withXml({ user: { id: 1, name: "<Ada & Bob>" } }).toResponse();
    assert.equal(res.headers.get("content-type"), "application/xml");
    assert.equal(
      await res.text(),
      '<?xml version="1.0" encoding="UTF-8"?><user><id>1</id><name>&lt;Ada &amp; Bob&gt;</name></user>',
    );
  });

  it("withXml wraps several keys in <response> and refuses invalid names", async () => {
    const text = await ResponseEntity.ok().withXml({ a: 1, b: 2 }).toResponse().text();
    assert.match(text, /<response><a>1<\/a><b>2<\/b><\/response>$/);
    assert.throws(
      () => ResponseEntity.ok().withXml({ "bad name": 1 }).toResponse(),
      /XML element name/,
    );
  });

  it("a header value Headers refuses (NUL, CR, LF) throws naming the header, never the value", () => {
    const bad = "x\r\n[thaw] admin login succeeded";
    for (
      const build of [
        () => ResponseEntity.ok().withHeader("X-Echo", bad),
        () => ResponseEntity.ok().withContentType(bad),
        () => ResponseEntity.created(bad),
        () => ResponseEntity.ok().withHeader("X-Echo", "a\0b"),
        // Deno's Headers stores this one as "" where Bun's and Node's throw: Thaw refuses it first.
        () => ResponseEntity.ok().withHeader("X-Echo", "\t\0\n\0"),
      ]
    ) {
      assert.throws(
        build,
        (error: unknown) =>
          error instanceof TypeError && /"(X-Echo|Content-Type|Location)"/.test(error.message) &&
          !/admin|a\0b/.test(error.message),
      );
    }
  });

  it("withHeader appends, withContentType replaces", () => {
    const res = ResponseEntity.ok("x")
      .withHeader("Vary", "Accept").withHeader("Vary", "Origin")
      .withContentType("text/csv").withContentType("text/html").toResponse();
    assert.equal(res.headers.get("vary"), "Accept, Origin");
    assert.equal(res.headers.get("content-type"), "text/html");
  });

  it("withStatus and withStatusCode replace the status", () => {
    assert.equal(ResponseEntity.ok().withStatus(HttpStatus.GONE).getStatusCode(), 410);
    assert.equal(ResponseEntity.ok().withStatusCode(299).toResponse().status, 299);
  });

  it("withCookie appends Set-Cookie through Hono's serialiser", () => {
    const headers = ResponseEntity.ok().withCookie("a", "1", { httpOnly: true, path: "/" })
      .withCookie("b", "2").toResponse().headers;
    assert.deepEqual(headers.getSetCookie(), ["a=1; Path=/; HttpOnly", "b=2; Path=/"]);
    assert.throws(() => ResponseEntity.ok().withCookie("__Host-x", "1", { path: "/x" }));
  });

  it("setBody keeps the content type and picks a default", async () => {
    const text = ResponseEntity.ok().setBody("hi").toResponse();
    assert.equal(text.headers.get("content-type"), "text/plain; charset=utf-8");
    const json = ResponseEntity.ok().setBody({ a: 1 }).toResponse();
    assert.equal(json.headers.get("content-type"), "application/json");
    const typed = ResponseEntity.ok().withContentType("application/problem+json").setBody({ a: 1 });
    assert.deepEqual(await typed.toResponse().json(), { a: 1 });
    const bytes = ResponseEntity.ok().setBody(new Uint8Array([1, 2])).toResponse();
    assert.deepEqual(new Uint8Array(await bytes.arrayBuffer()), new Uint8Array([1, 2]));
  });

  it("refuses a body it cannot send", () => {
    assert.throws(
      () => ResponseEntity.ok().withContentType("text/csv").setBody({ a: 1 }).toResponse(),
      /Cannot send a object body as text\/csv/,
    );
    assert.throws(
      () => ResponseEntity.noContent().setBody("x").toResponse(),
      /204 response cannot/,
    );
  });

  it("readers give back what was set", () => {
    const entity = ResponseEntity.created("/a").withJson({ b: 2 });
    assert.equal(entity.getStatusCode(), 201);
    assert.equal(entity.getHeaders().get("location"), "/a");
    assert.deepEqual(entity.getBody(), { b: 2 });
  });
});
