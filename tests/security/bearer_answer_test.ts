// RFC 6750's answers, and the header they carry whatever the realm and the scopes hold: every
// character a configured realm or a scope name may hold, each byte value included, stays inside
// its quoted string (no header line, no parameter of its own).
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  bearerAnswer,
  type BearerRefusal,
  bearerResponse,
} from "../../src/security/bearer_answer.ts";
import { propertyOptions } from "../property.ts";

/** A challenge parsed strictly: `Bearer`, then `name="value"` parameters separated by `, `. */
function parseChallenge(header: string): Map<string, string> {
  assert.match(header, /^Bearer(?: |$)/);
  const params = new Map<string, string>();
  const rest = header.slice("Bearer".length);
  const param = /^(?:, | )([a-z_]+)="((?:[^"\\]|\\.)*)"/;
  let at = 0;
  while (at < rest.length) {
    const match = param.exec(rest.slice(at));
    assert.ok(match !== null, `unparsable challenge: ${JSON.stringify(header)}`);
    assert.ok(!params.has(match[1]), `${match[1]} twice in ${JSON.stringify(header)}`);
    params.set(match[1], match[2].replace(/\\(.)/g, "$1"));
    at += match[0].length;
  }
  return params;
}

const printable = (text: string) => text.replace(/[^\x20-\x7E]/g, "");
const isScopeToken = (scope: string) => /^[\x21\x23-\x5B\x5D-\x7E]+$/.test(scope);

/** The header a runtime's `Headers` keeps of the value, which must be the value itself. */
function sent(value: string): string {
  const headers = new Headers();
  headers.set("www-authenticate", value);
  assert.equal(headers.get("www-authenticate"), value);
  return value;
}

const CHARACTERS = [
  ...Array.from({ length: 256 }, (_, code) => String.fromCharCode(code)),
  "\u0100",
  "\u2028",
  "\u2029",
  "\uFEFF",
  "\uFFFF",
  "\uD800",
  "\uDC00",
  "\u{1F512}",
];

describe("bearerAnswer", () => {
  it("answers each refusal with RFC 6750's status, challenge and code, and nothing more", async () => {
    const cases: [BearerRefusal, number, string, string][] = [
      [{ kind: "missing" }, 401, 'Bearer realm="api"', ""],
      [
        { kind: "invalid-request" },
        400,
        'Bearer realm="api", error="invalid_request"',
        '{"error":"invalid_request"}',
      ],
      [
        { kind: "invalid-token" },
        401,
        'Bearer realm="api", error="invalid_token"',
        '{"error":"invalid_token"}',
      ],
      [
        { kind: "insufficient-scope", scopes: ["orders:read", "orders:write"] },
        403,
        'Bearer realm="api", error="insufficient_scope", scope="orders:read orders:write"',
        '{"error":"insufficient_scope"}',
      ],
      [
        { kind: "insufficient-scope" },
        403,
        'Bearer realm="api", error="insufficient_scope"',
        '{"error":"insufficient_scope"}',
      ],
    ];
    for (const [refusal, status, challenge, body] of cases) {
      const answer = bearerAnswer(refusal, "api");
      assert.equal(answer.status, status);
      assert.equal(answer.headers["www-authenticate"], challenge);
      assert.equal(answer.body, body);
      const response = bearerResponse(answer);
      assert.equal(response.status, status);
      assert.equal(response.headers.get("www-authenticate"), challenge);
      assert.equal(await response.text(), body);
      assert.equal(response.headers.get("content-type"), body === "" ? null : "application/json");
    }
    assert.equal(bearerAnswer({ kind: "missing" }).headers["www-authenticate"], "Bearer");
    assert.equal(
      bearerAnswer({ kind: "invalid-token" }).headers["www-authenticate"],
      'Bearer error="invalid_token"',
    );
  });

  it("keeps every character of a realm inside its quoted string", () => {
    for (const c of CHARACTERS) {
      for (const realm of [c, `a${c}b`, `${c}", error="none`, `\\${c}`]) {
        const header = sent(
          bearerAnswer({ kind: "invalid-token" }, realm).headers["www-authenticate"],
        );
        assert.match(header, /^[\x20-\x7E]*$/, JSON.stringify(realm));
        assert.deepEqual(
          [...parseChallenge(header)],
          [["realm", printable(realm)], ["error", "invalid_token"]],
          JSON.stringify(realm),
        );
      }
    }
  });

  it("sends a scope only when it is a scope-token, so none adds a parameter or a line", () => {
    for (const c of CHARACTERS) {
      const scopes = [`read${c}`, "write", `${c}", realm="x`];
      const header = sent(
        bearerAnswer({ kind: "insufficient-scope", scopes }).headers["www-authenticate"],
      );
      assert.match(header, /^[\x20-\x7E]*$/);
      const params = parseChallenge(header);
      assert.deepEqual([...params.keys()], ["error", "scope"], JSON.stringify(c));
      assert.equal(params.get("scope"), scopes.filter(isScopeToken).join(" "));
    }
  });

  it("sends a validator's description with every character a header cannot carry left out", () => {
    for (const c of CHARACTERS) {
      for (const description of [c, `a${c}b`, `${c}", error="none`, `\\${c}`]) {
        const header = sent(
          bearerAnswer({ kind: "invalid-token", description }, "r").headers["www-authenticate"],
        );
        assert.match(header, /^[\x20-\x7E]*$/, JSON.stringify(description));
        const kept = description.replace(/[^\x20\x21\x23-\x5B\x5D-\x7E]/g, "");
        assert.deepEqual(
          [...parseChallenge(header)],
          [
            ["realm", "r"],
            ["error", "invalid_token"],
            ...(kept === "" ? [] : [["error_description", kept]]),
          ],
          JSON.stringify(description),
        );
      }
    }
    // A sentence, not a document.
    const long = bearerAnswer({ kind: "invalid-token", description: "x".repeat(10_000) });
    assert.equal(
      parseChallenge(long.headers["www-authenticate"]).get("error_description"),
      "x".repeat(200),
    );
    assert.equal(long.body, '{"error":"invalid_token"}');
  });

  it("holds for any realm and scopes", () => {
    const anyText = fc.string({
      unit: fc.oneof(fc.integer({ min: 0, max: 0xFF }), fc.integer({ min: 0, max: 0xFFFF }))
        .map((code) => String.fromCharCode(code)),
      maxLength: 12,
    });
    fc.assert(
      fc.property(
        fc.option(anyText, { nil: undefined }),
        fc.array(anyText, { maxLength: 4 }),
        (realm, scopes) => {
          const answer = bearerAnswer({ kind: "insufficient-scope", scopes }, realm);
          const params = parseChallenge(sent(answer.headers["www-authenticate"]));
          const expected: [string, string][] = [];
          if (realm !== undefined) expected.push(["realm", printable(realm)]);
          expected.push(["error", "insufficient_scope"]);
          const tokens = scopes.filter(isScopeToken);
          if (tokens.length > 0) expected.push(["scope", tokens.join(" ")]);
          assert.deepEqual([...params], expected);
          assert.equal(answer.body, '{"error":"insufficient_scope"}');
        },
      ),
      propertyOptions(),
    );
  });
});
