import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { HttpStatus } from "../../mod.ts";

describe("HttpStatus", () => {
  it("names every registered status from 100 to 511", () => {
    const codes = HttpStatus.values().map((s) => s.getValue());
    for (
      const code of [100, 103, 200, 208, 226, 308, 404, 409, 413, 418, 422, 429, 451, 500, 508, 511]
    ) {
      assert.ok(codes.includes(code), `missing ${code}`);
    }
    assert.equal(codes.length, 62);
    assert.deepEqual(codes, [...codes].sort((a, b) => a - b));
    assert.ok(codes.every((c) => c >= 100 && c <= 511));
  });

  it("exposes constants with value and reason phrase", () => {
    assert.equal(HttpStatus.CONFLICT.getValue(), 409);
    assert.equal(HttpStatus.CONFLICT.getReasonPhrase(), "Conflict");
    assert.equal(HttpStatus.NOT_FOUND.toString(), "404 Not Found");
    assert.equal(JSON.stringify({ s: HttpStatus.OK }), '{"s":200}');
  });

  it("keeps the older names as the same instances", () => {
    assert.equal(HttpStatus.PAYLOAD_TOO_LARGE, HttpStatus.CONTENT_TOO_LARGE);
    assert.equal(HttpStatus.UNPROCESSABLE_ENTITY, HttpStatus.UNPROCESSABLE_CONTENT);
    assert.equal(HttpStatus.REQUESTED_RANGE_NOT_SATISFIABLE, HttpStatus.RANGE_NOT_SATISFIABLE);
  });

  it("sets every constant the class declares, and no other, each to the status its name says", () => {
    // The declarations are what the types promise; the table in the class is what runs.
    const source = readFileSync(new URL("../../src/http/http_status.ts", import.meta.url), "utf8");
    const declared = [...source.matchAll(/declare static readonly (\w+): HttpStatus;/g)]
      .map((m) => m[1]);
    const constants = HttpStatus as unknown as Record<string, unknown>;
    const set = Object.keys(constants).filter((key) => constants[key] instanceof HttpStatus);
    assert.deepEqual(set.sort(), [...declared].sort());
    assert.equal(declared.length, 65);
    for (const name of declared) {
      const status = constants[name] as HttpStatus;
      assert.equal(HttpStatus.valueOf(status.getValue()), status, name);
    }
    assert.equal(HttpStatus.I_AM_A_TEAPOT.getReasonPhrase(), "I'm a teapot");
    assert.equal(HttpStatus.NON_AUTHORITATIVE_INFORMATION.getValue(), 203);
    assert.equal(HttpStatus.HTTP_VERSION_NOT_SUPPORTED.getValue(), 505);
    assert.equal(HttpStatus.IM_USED.toString(), "226 IM Used");
  });

  it("looks statuses up by code", () => {
    assert.equal(HttpStatus.valueOf(503), HttpStatus.SERVICE_UNAVAILABLE);
    assert.equal(HttpStatus.resolve(299), undefined);
    assert.throws(() => HttpStatus.valueOf(299), /No HTTP status is registered for code 299/);
  });

  it("classifies by series", () => {
    assert.equal(HttpStatus.CONTINUE.series(), "INFORMATIONAL");
    assert.equal(HttpStatus.FOUND.series(), "REDIRECTION");
    assert.equal(HttpStatus.BAD_GATEWAY.series(), "SERVER_ERROR");
    assert.equal(HttpStatus.BAD_REQUEST.isError(), true);
    assert.equal(HttpStatus.OK.isError(), false);
  });
});
