import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { redactUrl, redactUrlText } from "../../src/config/redact.ts";
import { propertyOptions } from "../property.ts";

// Characters a URL parser treats specially, percent signs, quotes, and non-ASCII.
const special = ["@", ":", "/", "?", "#", "%", "&", "=", "*", "+", ";", "'", '"', "é", "密", "🔑"];
const plain = [..."abcXYZ019-_.~"];
const password = (spaces: boolean) =>
  fc.string({
    unit: fc.constantFrom(...special, ...plain, ...(spaces ? [" ", "\t"] : [])),
    minLength: 1,
    maxLength: 16,
  });
const secretParam = fc.constantFrom(
  "password",
  "Password",
  "PASSWORD",
  "pass",
  "pwd",
  "passwd",
  "sslpassword",
  "secret",
  "client_secret",
  "token",
  "access_token",
  "api_key",
  "apiKey",
);

/** A URL shape with the secret between `before` and `after`. */
interface Shape {
  readonly before: string;
  readonly after: string;
  /** How the password is written there. */
  readonly encode: (pw: string) => string;
}

const raw = (pw: string) => pw;
const shapes: fc.Arbitrary<Shape> = fc.oneof(
  // `?password=` in a PostgreSQL URL, between other parameters.
  secretParam.map((p) => ({
    before: `postgres://127.0.0.1:54329/thaw?sslmode=disable&${p}=`,
    after: "&application_name=x",
    encode: encodeURIComponent,
  })),
  secretParam.map((p) => ({
    before: `mysql://127.0.0.1:33069/thaw?${p}=`,
    after: "",
    encode: encodeURIComponent,
  })),
  // Written raw but for the separators: `#`, `?`, `@`, `/` and `=` stay in the value.
  secretParam.map((p) => ({
    before: `postgresql://h/db?${p}=`,
    after: "",
    encode: (pw: string) => pw.replace(/[&;\s]/g, encodeURIComponent),
  })),
  // Userinfo without a scheme, in a malformed URL, in a datasource without `//`, and proper.
  fc.constant({ before: "admin:", after: "@127.0.0.1:9200", encode: raw }),
  fc.constant({ before: "htp://admin:", after: "/x@host", encode: raw }),
  fc.constant({ before: "postgres:thaw:", after: "@host/db", encode: raw }),
  fc.constant({ before: "https://admin:", after: "@node1:9200/", encode: raw }),
  fc.constant({ before: "https://admin:", after: "@node1:9200/", encode: encodeURIComponent }),
);

/**
 * `masked` keeps nothing of the secret: it is some start of `before`, `***`, and some end of
 * `after` (masking more than the secret is allowed; leaking any character of it is not).
 */
function assertMasked(masked: string, before: string, after: string, original: string): void {
  for (let i = masked.indexOf("***"); i !== -1; i = masked.indexOf("***", i + 1)) {
    if (before.startsWith(masked.slice(0, i)) && after.endsWith(masked.slice(i + 3))) return;
  }
  assert.fail(`not masked: ${JSON.stringify(original)} -> ${JSON.stringify(masked)}`);
}

/**
 * `admin:` and a password starting with `//` is `admin://...`: a URL with the scheme `admin`, whose
 * `//` is shown as any scheme's is. The property leaves that one reading aside.
 */
function readsAsScheme(shape: Shape, url: string): boolean {
  return !shape.before.includes("//") && /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(url);
}

describe("redactUrl / redactUrlText (property)", () => {
  it("masks a password of any characters in every URL shape, as one value", () => {
    fc.assert(
      fc.property(shapes, password(true), (shape, pw) => {
        const url = shape.before + shape.encode(pw) + shape.after;
        fc.pre(!readsAsScheme(shape, url));
        assertMasked(redactUrl(url), shape.before, shape.after, url);
      }),
      propertyOptions(1000),
    );
  });

  it("masks a password without spaces in every URL shape inside a message", () => {
    fc.assert(
      fc.property(shapes, password(false), (shape, pw) => {
        const before = `cannot connect to ${shape.before}`;
        const after = `${shape.after}: password authentication failed for user "thaw"`;
        const text = before + shape.encode(pw) + after;
        fc.pre(!readsAsScheme(shape, shape.before + shape.encode(pw) + shape.after));
        assertMasked(redactUrlText(text), before, after, text);
      }),
      propertyOptions(1000),
    );
  });

  it("masks a known password wherever a driver echoes it, raw or URL-encoded", () => {
    fc.assert(
      fc.property(password(true), fc.boolean(), (pw, encoded) => {
        // A password of asterisks would be found in the mask itself.
        fc.pre(!pw.includes("*"));
        const text = `FATAL: bad login "${encoded ? encodeURIComponent(pw) : pw}" (28P01)`;
        const masked = redactUrlText(text, [pw]);
        assert.ok(!masked.includes(pw), masked);
        assert.ok(!masked.includes(encodeURIComponent(pw)), masked);
      }),
      propertyOptions(500),
    );
  });

  it("leaves text without secrets unchanged", () => {
    const noSecretName = (s: string) =>
      !/pass|pwd|secret|token|credential|auth|api[-_]?key|access[-_]?key|private[-_]?key|signature/i
        .test(s);
    fc.assert(
      fc.property(
        fc.webUrl({ withQueryParameters: true, withFragments: true })
          .filter((u) => !u.includes("@") && noSecretName(u)),
        fc.string().filter((s) => !s.includes("@") && !s.includes("=")),
        (url, words) => {
          assert.equal(redactUrl(url), url);
          const text = `${words} cannot connect to ${url}: ${words}`;
          assert.equal(redactUrlText(text), text);
        },
      ),
      propertyOptions(1000),
    );
  });
});

describe("redactUrl / redactUrlText (examples)", () => {
  it("masks each shape of issue 17", () => {
    const cases: [string, string][] = [
      [
        "postgres://127.0.0.1:54329/thaw?user=thaw&password=pw1",
        "postgres://127.0.0.1:54329/thaw?user=thaw&password=***",
      ],
      ["mysql://h:3306/db?PWD=pw2&ssl=true", "mysql://h:3306/db?PWD=***&ssl=true"],
      ["admin:pw3@host:9200", "***@host:9200"],
      ["htp://admin:pw4/x@host", "htp://***@host"],
      ["postgres:thaw:pw5@host/db", "***@host/db"],
      ["http://user@host/", "http://***@host/"],
      ["host=h password=pw6 user=u", "host=h password=*** user=u"],
    ];
    for (const [input, expected] of cases) assert.equal(redactUrl(input), expected);
    assert.equal(
      redactUrlText('got "admin:pw3@host:9200" and (http://a:pw7@b/)'),
      'got "***@host:9200" and (http://***@b/)',
    );
  });

  it("keeps what is no secret: user@host, times, plain URLs, an empty password", () => {
    for (
      const text of [
        "executed by tester@test at 12:30",
        "cannot connect to postgres://127.0.0.1:54329/thaw: connect ECONNREFUSED 127.0.0.1:54329",
        'password authentication failed for user "thaw" (SQLSTATE 28P01)',
        "https://node1:9200/_cluster/health?timeout=5s",
        "postgres://h/db?password=&sslmode=require",
      ]
    ) {
      assert.equal(redactUrlText(text), text);
    }
    assert.equal(redactUrlText("no secrets here", ["", "absent"]), "no secrets here");
  });
});
