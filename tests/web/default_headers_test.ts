import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { withDefaultHeaders } from "../../src/web/default_headers.ts";
import { toResponse } from "../../src/web/return_value.ts";
import { ResponseEntity } from "../../mod.ts";
import { propertyOptions } from "../property.ts";

const name = fc.constantFrom(
  "set-cookie",
  "vary",
  "cache-control",
  "content-type",
  "x-a",
  "x-b",
  "location",
);
const token = fc.constantFrom("Origin", "origin", "Accept", "Accept-Encoding", "*", "");
const value = (n: string) =>
  n === "vary"
    ? fc.array(token, { maxLength: 3 }).map((t) => t.join(", "))
    : fc.stringMatching(/^[a-z0-9=;]{1,8}$/);
const fields = fc.array(name.chain((n) => value(n).map((v) => [n, v] as [string, string])), {
  maxLength: 6,
});
const varyTokens = (text: string | null) =>
  (text ?? "").split(",").map((t) => t.trim().toLowerCase()).filter((t) => t !== "");

describe("withDefaultHeaders (property)", () => {
  it("keeps the answer's own values, adds the missing defaults, adds up cookies and Vary", async () => {
    await fc.assert(
      fc.asyncProperty(fields, fields, async (own, defaults) => {
        const answerHeaders = new Headers();
        for (const [n, v] of own) answerHeaders.append(n, v);
        const defaultHeaders = new Headers();
        for (const [n, v] of defaults) defaultHeaders.append(n, v);
        const answer = new Response("body", { status: 201, headers: answerHeaders });
        const merged = withDefaultHeaders(answer, defaultHeaders);
        assert.equal(merged.status, 201);
        assert.equal(await merged.text(), "body");
        for (const [n, v] of answer.headers) {
          if (n === "set-cookie" || n === "vary") continue;
          assert.equal(merged.headers.get(n), v, `the answer's own ${n}`);
        }
        for (const [n, v] of defaultHeaders) {
          if (n === "set-cookie" || n === "vary" || answer.headers.has(n)) continue;
          assert.equal(merged.headers.get(n), v, `the default ${n}`);
        }
        assert.deepEqual(
          merged.headers.getSetCookie(),
          [...answer.headers.getSetCookie(), ...defaultHeaders.getSetCookie()],
        );
        const all = [
          ...varyTokens(answer.headers.get("vary")),
          ...varyTokens(defaultHeaders.get("vary")),
        ];
        const vary = varyTokens(merged.headers.get("vary"));
        if (!defaultHeaders.has("vary")) {
          // Untouched, as far as a copy of Headers keeps a value (Deno trims a combined one).
          assert.deepEqual(vary, varyTokens(answer.headers.get("vary")), "Vary untouched");
        } else if (all.includes("*")) assert.deepEqual(vary, ["*"]);
        else {
          assert.deepEqual(new Set(vary), new Set(all));
          assert.equal(new Set(vary).size, vary.length, "no token twice");
        }
      }),
      propertyOptions(100),
    );
  });

  it("gives the answer back untouched when there is nothing to add", () => {
    const answer = new Response("x", { headers: { "x-a": "1" } });
    assert.equal(withDefaultHeaders(answer, new Headers({ "x-a": "2" })), answer);
    assert.equal(withDefaultHeaders(answer, new Headers()), answer);
  });

  it("copies a redirect, whose headers are immutable", () => {
    const redirect = Response.redirect("http://example.test/", 303);
    const merged = withDefaultHeaders(redirect, new Headers({ "x-a": "1" }));
    assert.equal(merged.status, 303);
    assert.equal(merged.headers.get("location"), "http://example.test/");
    assert.equal(merged.headers.get("x-a"), "1");
  });
});

// What a route may return, each made afresh: a response is read once.
const returned = fc.constantFrom<[string, () => unknown]>(
  ["an object", () => ({ a: 1 })],
  ["an array", () => [1, 2]],
  ["a string", () => "text"],
  ["undefined", () => undefined],
  ["a number", () => 7],
  ["a Blob", () => new Blob(["blob"])],
  ["a typed Blob", () => new Blob(["png"], { type: "image/png" })],
  ["a FormData", () => {
    const form = new FormData();
    form.set("a", "1");
    return form;
  }],
  ["a URLSearchParams", () => new URLSearchParams({ a: "1" })],
  ["bytes", () => new Uint8Array([104, 105])],
  [
    "a ResponseEntity",
    () =>
      ResponseEntity.status(201).withHeader("Set-Cookie", "own=1").withHeader("Vary", "Accept")
        .withHeader("Cache-Control", "no-store").withJson({ b: 2 }),
  ],
  ["a Response", () => new Response("raw", { status: 202, headers: { "x-a": "own" } })],
);

describe("toResponse with defaults (property)", () => {
  it("makes what withDefaultHeaders makes of the answer made without them", async () => {
    await fc.assert(
      fc.asyncProperty(returned, fields, async ([, make], defaults) => {
        const defaultHeaders = new Headers();
        for (const [n, v] of defaults) defaultHeaders.append(n, v);
        const made = toResponse(make(), defaultHeaders);
        const copied = withDefaultHeaders(toResponse(make()), defaultHeaders);
        assert.equal(made.status, copied.status);
        // A multipart body's boundary is drawn afresh for each response.
        const boundary = (r: Response) =>
          /boundary=([^;\s]+)/.exec(r.headers.get("content-type") ?? "")?.[1];
        const same = (r: Response, text: string) => {
          const b = boundary(r);
          return b === undefined ? text : text.replaceAll(b, "BOUNDARY");
        };
        assert.deepEqual(
          [...made.headers].map(([n, v]) => [n, same(made, v)]),
          [...copied.headers].map(([n, v]) => [n, same(copied, v)]),
        );
        assert.deepEqual(made.headers.getSetCookie(), copied.headers.getSetCookie());
        assert.equal(same(made, await made.text()), same(copied, await copied.text()));
      }),
      propertyOptions(200),
    );
  });
});
