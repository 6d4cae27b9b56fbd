// The one masking module: the URL masks (property and examples, as issue 17 found its shapes), the
// masks of known secrets and of placeholder values, masks over JSON, and the composed masks a
// message goes through (property: no secret survives, whatever the text around it, and a second
// pass masks no secret the first one left).
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  composeMasks,
  type Mask,
  maskError,
  maskJson,
  maskUrl,
  maskUrls,
  noMask,
  placeholdersMask,
  secretsMask,
} from "../../src/config/secrets_mask.ts";
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

describe("maskUrl / maskUrls (property)", () => {
  it("masks a password of any characters in every URL shape, as one value", () => {
    fc.assert(
      fc.property(shapes, password(true), (shape, pw) => {
        const url = shape.before + shape.encode(pw) + shape.after;
        fc.pre(!readsAsScheme(shape, url));
        assertMasked(maskUrl(url), shape.before, shape.after, url);
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
        assertMasked(maskUrls(text), before, after, text);
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
        const masked = composeMasks(maskUrls, secretsMask([pw]))(text);
        assert.ok(!masked.includes(pw), masked);
        assert.ok(!masked.includes(encodeURIComponent(pw)), masked);
      }),
      propertyOptions(500),
    );
  });

  it("leaves text without secrets unchanged", () => {
    const noSecretName = (s: string) =>
      !/pass|pwd|secret|token|credential|auth|key|signature|jwt|bearer|sess|sig|sid|code/i.test(s);
    fc.assert(
      fc.property(
        fc.webUrl({ withQueryParameters: true, withFragments: true })
          .filter((u) => !u.includes("@") && noSecretName(u)),
        fc.string().filter((s) => !s.includes("@") && !s.includes("=")),
        (url, words) => {
          assert.equal(maskUrl(url), url);
          const text = `${words} cannot connect to ${url}: ${words}`;
          assert.equal(maskUrls(text), text);
        },
      ),
      propertyOptions(1000),
    );
  });
});

// Names a URL carries credentials under besides passwords: signed URLs (Azure SAS `sig`, S3 and
// Google signatures), API keys, OAuth codes and tokens, sessions.
const credentialParam = fc.constantFrom(
  "sig",
  "SIG",
  "signature",
  "X-Amz-Signature",
  "X-Goog-Signature",
  "key",
  "Key",
  "api_key",
  "apikey",
  "code",
  "token",
  "access_token",
  "id_token",
  "refresh_token",
  "client_secret",
  "password",
  "session",
  "sid",
  "jwt",
  "JSESSIONID",
  "PHPSESSID",
  "session_id",
);
// Where such a parameter starts: the query, after another one, a `;` path parameter, a fragment
// (`#access_token=` of OAuth's implicit flow), a fragment after a query.
const credentialShapes = credentialParam.chain((p) =>
  fc.constantFrom(
    { before: `https://h/cb?${p}=`, after: "&state=xyz" },
    { before: `https://h/cb?page=2&${p}=`, after: "" },
    { before: `https://h/app;${p}=`, after: "" },
    { before: `https://h/cb#${p}=`, after: "&expires_in=3600" },
    { before: `https://h/cb?x=1#${p}=`, after: "" },
    { before: `https://h/cb?a= ${p}=`, after: "" },
  )
);
// Any character from U+0000 to U+00FF, and beyond, written as a URL writes it but for the
// characters that end a value (`&`, `;`, whitespace), which a sender must encode.
const anyValue = fc.string({
  unit: fc.oneof(
    fc.integer({ min: 0, max: 0xff }).map((c) => String.fromCharCode(c)),
    fc.constantFrom("密", "🔑", "\u2028", "\ufeff"),
  ),
  minLength: 1,
  maxLength: 16,
}).map((v) => v.replace(/[&;\s]/g, encodeURIComponent));

describe("maskUrl / maskUrls: credential parameters (property)", () => {
  it("masks the value of every credential parameter, in the query or the fragment", () => {
    fc.assert(
      fc.property(credentialShapes, anyValue, ({ before, after }, value) => {
        assertMasked(maskUrl(before + value + after), before, after, before + value + after);
        if (before.includes(" ")) return;
        const text = `redirect to ${before}${value}${after} failed`;
        assertMasked(maskUrls(text), `redirect to ${before}`, `${after} failed`, text);
      }),
      propertyOptions(1000),
    );
  });
});

describe("maskUrl / maskUrls (examples)", () => {
  it("masks signed URLs, API keys, OAuth codes and fragment tokens", () => {
    const cases: [string, string][] = [
      [
        "https://acct.blob.core.windows.net/c/b?sv=2022-11-02&se=2026&sig=AbC%2Fd3F&sp=r",
        "https://acct.blob.core.windows.net/c/b?sv=2022-11-02&se=2026&sig=***&sp=r",
      ],
      [
        "https://maps.googleapis.com/maps/api/geocode/json?address=x&key=AIzaSyD-s3cret",
        "https://maps.googleapis.com/maps/api/geocode/json?address=x&key=***",
      ],
      ["https://app/cb?code=4%2F0AX-s3cret&state=af0", "https://app/cb?code=***&state=af0"],
      [
        "https://app/cb#access_token=ya29.s3cret&expires_in=3599&id_token=eyJ.x.y",
        "https://app/cb#access_token=***&expires_in=3599&id_token=***",
      ],
      [
        "https://app/;jsessionid=0AB1C2?sid=77f&jwt=eyJ.a.b&session=9",
        "https://app/;jsessionid=***&jwt=***&session=***",
      ],
      ["host=h user= password=pw6", "host=h user= password=***"],
    ];
    for (const [input, expected] of cases) assert.equal(maskUrl(input), expected);
  });

  it("keeps parameters only named like a credential parameter", () => {
    for (const url of ["https://h/?keyboard=us&zipcode=1&sigma=2&design=3&inside=4#page=2"]) {
      assert.equal(maskUrl(url), url);
    }
  });

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
    for (const [input, expected] of cases) assert.equal(maskUrl(input), expected);
    assert.equal(
      maskUrls('got "admin:pw3@host:9200" and (http://a:pw7@b/)'),
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
      assert.equal(maskUrls(text), text);
    }
    assert.equal(
      composeMasks(maskUrls, secretsMask(["", "absent"]))("no secrets here"),
      "no secrets here",
    );
  });
});

describe("placeholdersMask", () => {
  it("writes values back as their names, longest first, leaving short ones", () => {
    const placeholders = new Map([["pw", "s3cret-pw"], ["pre", "s3cret"], ["n", "1"]]);
    assert.equal(
      placeholdersMask(placeholders)("VALUES ('s3cret-pw', 's3cret', 1)"),
      "VALUES ('${pw}', '${pre}', 1)",
    );
    assert.equal(placeholdersMask(undefined)("no values"), "no values");
  });

  it("masks a value URL-encoded too: a name in a request's path is encoded", () => {
    const mask = placeholdersMask(new Map([["tenant", "café-ünï"]]));
    assert.equal(
      mask(`PUT /${encodeURIComponent("café-ünï")}-logs and café-ünï`),
      "PUT /${tenant}-logs and ${tenant}",
    );
  });

  it("property: no value of three characters or more is left in the text", () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ minLength: 3, maxLength: 8 }), { minLength: 1, maxLength: 3 }),
        fc.array(fc.string({ maxLength: 6 }), { maxLength: 4 }),
        (values, filler) => {
          const placeholders = new Map(values.map((v, i) => [`p${i}`, v]));
          const text = values.map((v, i) => `${filler[i] ?? ""}${v}`).join(" ");
          const masked = placeholdersMask(placeholders)(text);
          // Between the names written back: a name and the text beside it can spell a value
          // (`${p0} ` holds "0} ") without showing any of it.
          const pieces = masked.split(/\$\{p\d+\}/);
          for (const v of values) {
            assert.ok(pieces.every((piece) => !piece.includes(v)), `${v} in ${masked}`);
          }
        },
      ),
      propertyOptions(200),
    );
  });
});

describe("placeholdersMask: one pass", () => {
  it("never masks again inside a name it wrote back", () => {
    // `ten` is in `${tenant}`: masked after it, it would make `${${ten}ant}`.
    const mask = placeholdersMask(new Map([["tenant", "acme-corp"], ["ten", "ten"]]));
    assert.equal(mask("PUT /logs-acme-corp ten"), "PUT /logs-${tenant} ${ten}");
    const inName = placeholdersMask(new Map([["region", "eu-1x"], ["g", "{re"], ["h", "on}"]]));
    assert.equal(inName("eu-1x {re on}"), "${region} ${g} ${h}");
  });

  it("hides both of two values that overlap in the text, whichever is longer", () => {
    // Either one written back alone would leave part of the other shown.
    const mask = placeholdersMask(new Map([["user", "zabc"], ["password", "abcdefgh"]]));
    assert.equal(mask("CREATE USER zabcdefgh; zabc"), "CREATE USER ${user}${password}; ${user}");
    const host = placeholdersMask(new Map([["password", "s3cr"], ["host", "cr3t.example"]]));
    assert.equal(host("GET s3cr3t.example/x"), "GET ${password}${host}/x");
    const even = placeholdersMask(new Map([["a", "abcd"], ["b", "cdef"]]));
    assert.equal(even("abcdef"), "${a}${b}");
  });

  // Names whose written-back form holds short values, and values taken from those forms.
  const names = ["tenant", "region", "ten", "reg"];
  const nameForm = fc.constantFrom(...names.map((n) => `\${${n}}`));
  const piece = fc.oneof(
    fc.tuple(nameForm, fc.nat(), fc.integer({ min: 3, max: 7 }))
      .map(([form, at, length]) => form.slice(at % form.length, (at % form.length) + length))
      .filter((v) => v.length >= 3),
    fc.string({ minLength: 3, maxLength: 6 }),
    // Pieces of one word, which overlap where two of them meet in the text.
    fc.tuple(fc.nat(), fc.integer({ min: 3, max: 7 }))
      .map(([at, length]) => "s3cr3t.example".slice(at % 12, (at % 12) + length))
      .filter((v) => v.length >= 3),
  );
  const filler = fc.string({ unit: fc.constantFrom(..."ab-/ é"), maxLength: 4 });
  const setup = fc.record({
    values: fc.uniqueArray(piece, { minLength: 1, maxLength: 4 }),
    quotes: fc.array(fc.tuple(filler, fc.nat()), { minLength: 1, maxLength: 6 }),
  }).map(({ values, quotes }) => ({
    placeholders: new Map(values.map((v, i) => [names[i], v])),
    text: quotes.map(([before, n]) => before + values[n % values.length]).join(""),
  }));

  // What is left of `text` once every character of every occurrence of a value (as written or
  // URL-encoded) is taken out: the text masking must keep, in order, between the names.
  function uncovered(placeholders: ReadonlyMap<string, string>, text: string): string {
    const covered = new Array<boolean>(text.length).fill(false);
    for (const value of placeholders.values()) {
      for (const form of [value, encodeURIComponent(value)]) {
        for (let at = text.indexOf(form); at !== -1; at = text.indexOf(form, at + 1)) {
          covered.fill(true, at, at + form.length);
        }
      }
    }
    return [...Array(text.length).keys()].filter((i) => !covered[i]).map((i) => text[i]).join("");
  }

  it("property: every character of every value is hidden, and all else kept in order", () => {
    fc.assert(
      fc.property(setup, ({ placeholders, text }) => {
        const masked = placeholdersMask(placeholders)(text);
        // The filler holds no `$`: what is not a name written back is what was kept.
        assert.equal(
          masked.replace(/\$\{(?:tenant|region|ten|reg)\}/g, ""),
          uncovered(placeholders, text),
        );
      }),
      propertyOptions(500),
    );
  });

  it("property: two values that overlap in the text leave no character of either", () => {
    const word = "s3cr3t.example";
    const overlapping = fc.tuple(fc.nat(), fc.nat(), fc.nat(), fc.nat())
      .map((cuts) => cuts.map((c) => c % (word.length + 1)).sort((a, b) => a - b))
      // `a` is [i, k), `b` is [j, l): they share [j, k).
      .filter(([i, j, k, l]) => k - i >= 3 && l - j >= 3 && j < k && i < j && k < l);
    // No character of the word: the filler makes no occurrence of its own.
    const apart = fc.string({ unit: fc.constantFrom(..."b-/ é"), maxLength: 4 });
    fc.assert(
      fc.property(overlapping, apart, apart, ([i, j, k, l], before, after) => {
        const placeholders = new Map([["tenant", word.slice(i, k)], ["region", word.slice(j, l)]]);
        const text = before + word.slice(i, l) + after;
        const masked = placeholdersMask(placeholders)(text);
        assert.equal(masked, before + "${tenant}${region}" + after);
      }),
      propertyOptions(200),
    );
  });

  it("property: between the names written back, no value is left", () => {
    fc.assert(
      fc.property(setup, ({ placeholders, text }) => {
        const masked = placeholdersMask(placeholders)(text);
        for (const rest of masked.split(/\$\{(?:tenant|region|ten|reg)\}/)) {
          for (const value of placeholders.values()) {
            assert.ok(!rest.includes(value), `${value} left in ${JSON.stringify(masked)}`);
          }
        }
      }),
      propertyOptions(500),
    );
  });
});

describe("secretsMask, composeMasks, maskJson (examples)", () => {
  it("masks a secret as written and URL-encoded, and JSON-escaped when asked, longest first", () => {
    const secret = 'pa"ss/w0rd+';
    const text = `raw ${secret} url ${encodeURIComponent(secret)} json ${
      JSON.stringify(secret).slice(1, -1)
    }`;
    assert.equal(secretsMask([secret])(text), 'raw *** url *** json pa\\"ss/w0rd+');
    assert.equal(secretsMask([secret], { json: true })(text), "raw *** url *** json ***");
    // The shorter secret inside the longer one would leave the longer one's ends.
    assert.equal(secretsMask(["key", "long-key-1"])("long-key-1 key"), "*** ***");
    assert.equal(secretsMask(["", undefined]), noMask);
  });

  it("masks a secret holding a lone surrogate as written: no URL can encode it, and it throws no error", () => {
    const secret = "pw\udd11pw";
    assert.equal(secretsMask([secret], { json: true })(`said ${secret}.`), "said ***.");
  });

  it("composes masks in order, the first first; composing nothing is noMask", () => {
    const upper: Mask = (text) => text.toUpperCase();
    const hide: Mask = (text) => text.replaceAll("SECRET", "***");
    assert.equal(composeMasks(upper, hide)("a secret"), "A ***");
    assert.equal(composeMasks(hide, upper)("a secret"), "A SECRET");
    assert.equal(composeMasks(), noMask);
    assert.equal(composeMasks(noMask, placeholdersMask(undefined), secretsMask([])), noMask);
    assert.equal(composeMasks(noMask, upper), upper);
  });

  it("masks every string and key of a JSON value, keeps a __proto__ key a key, and cuts what is nested too deep", () => {
    const mask = secretsMask(["tok3n"], { json: true });
    const body = JSON.parse('{"error":{"reason":"bad tok3n","tok3n":[1,"tok3n"]},"__proto__":"x"}');
    const masked = maskJson(body, mask) as Record<string, unknown>;
    assert.deepEqual(
      masked,
      JSON.parse('{"error":{"reason":"bad ***","***":[1,"***"]},"__proto__":"x"}'),
    );
    assert.ok(Object.hasOwn(masked, "__proto__"));
    let deep: unknown = "tok3n";
    for (let i = 0; i < 100; i++) deep = [deep];
    assert.match(JSON.stringify(maskJson(deep, mask)), /"\(nested too deep\)"/);
    assert.equal(maskJson(body, noMask), body, "noMask returns the value itself");
  });
});

// ---- the composed masks: whatever the text around a secret ----

// Every byte value as a character, and the pieces of URLs and parameters the URL mask reads.
const anyByte = fc.integer({ min: 0, max: 255 }).map((b) => String.fromCharCode(b));
const urlPiece = fc.constantFrom(
  "password=",
  "?token=",
  "&",
  "&a=",
  ";",
  "@",
  "%40",
  ":",
  "://",
  "https://",
  " ",
  "\n",
  '"',
  "\\",
);
const around = fc.array(
  fc.oneof({ weight: 4, arbitrary: anyByte }, { weight: 1, arbitrary: urlPiece }),
  { maxLength: 16 },
).map((pieces) => pieces.join(""));
// A secret: printable ASCII and non-ASCII letters, but `*` (a secret of asterisks is found in
// every mask), and `$`, `{` and `}` (a placeholder value written back as `${name}` could join its
// neighbours into one of those).
const secretChar = fc.oneof(
  fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c))
    .filter((c) => !"*${}".includes(c)),
  fc.constantFrom("é", "密", "🔑"),
);
const secret = fc.array(secretChar, { minLength: 3, maxLength: 12 }).map((c) => c.join(""));

type Form = "raw" | "url" | "json";
const written = (value: string, form: Form) =>
  form === "raw"
    ? value
    : form === "url"
    ? encodeURIComponent(value)
    : JSON.stringify(value).slice(1, -1);

/**
 * Credentials and placeholder values, and a text quoting them among arbitrary characters: each
 * credential in any form a message may quote it in, each placeholder value as written.
 */
const scenario = fc.record({
  credentials: fc.uniqueArray(secret, { minLength: 1, maxLength: 3 }),
  values: fc.uniqueArray(secret, { maxLength: 3 }),
  quotes: fc.array(fc.tuple(around, fc.nat(), fc.constantFrom<Form>("raw", "url", "json")), {
    minLength: 1,
    maxLength: 6,
  }),
  tail: around,
}).map(({ credentials, values, quotes, tail }) => {
  const all = [...credentials, ...values];
  const text = quotes.map(([before, n, form]) => {
    const i = n % all.length;
    return before + written(all[i], i < credentials.length ? form : "raw");
  }).join("") + tail;
  return { credentials, values, text };
});

/**
 * The masks a message goes through: a search target's (placeholder values, then URLs, then the
 * connection's credentials in every form) and a SQL failure's (the driver's URLs and password,
 * then the target's placeholder values).
 */
function composed(credentials: readonly string[], values: readonly string[]) {
  const placeholders = placeholdersMask(new Map(values.map((v, i) => [`p${i}`, v])));
  return [
    {
      name: "search",
      mask: composeMasks(placeholders, maskUrls, secretsMask(credentials, { json: true })),
      forms: ["raw", "url", "json"] as const,
    },
    {
      name: "sql",
      mask: composeMasks(maskUrls, secretsMask(credentials), placeholders),
      forms: ["raw", "url"] as const,
    },
  ];
}

describe("the composed masks (property)", () => {
  it("leave no credential in any form, and no placeholder value, whatever the text around them", () => {
    fc.assert(
      fc.property(scenario, ({ credentials, values, text }) => {
        for (const { name, mask, forms } of composed(credentials, values)) {
          const masked = mask(text);
          for (const credential of credentials) {
            for (const form of forms) {
              const shown = written(credential, form);
              assert.ok(!masked.includes(shown), `${name}: ${form} ${shown} in ${masked}`);
            }
          }
          for (const value of values) {
            assert.ok(!masked.includes(value), `${name}: ${value} in ${masked}`);
          }
        }
      }),
      propertyOptions(1000),
    );
  });

  it("are idempotent one by one", () => {
    fc.assert(
      fc.property(scenario, ({ credentials, values, text }) => {
        const masks = [
          maskUrls,
          secretsMask(credentials, { json: true }),
          placeholdersMask(new Map(values.map((v, i) => [`p${i}`, v]))),
        ];
        for (const mask of masks) assert.equal(mask(mask(text)), mask(text));
      }),
      propertyOptions(1000),
    );
  });

  it("composed, find nothing more to mask on a second pass but what the URL mask reads anew, and nothing on a third", () => {
    fc.assert(
      fc.property(scenario, ({ credentials, values, text }) => {
        for (const { mask } of composed(credentials, values)) {
          const once = mask(text);
          const twice = mask(once);
          assert.equal(twice, maskUrls(once));
          assert.equal(mask(twice), twice);
        }
      }),
      propertyOptions(1000),
    );
  });

  it("composed, mask more, never less, on a second pass where a credential ended a URL parameter", () => {
    // The first pass reads `&<credential>=` as the parameter after `password=`, whose value it
    // masks up to there; masking the credential then leaves `&***=`, which is no parameter: the
    // second pass masks the value up to the end.
    const [search] = composed(["s3cret-key"], []);
    const once = search.mask("password=x&s3cret-key=y");
    assert.equal(once, "password=***&***=y");
    assert.equal(search.mask(once), "password=***");
  });
});

describe("maskError", () => {
  it("masks the message, the stack and what the error carries, down the chain", () => {
    const mask = secretsMask(["hunter22"]);
    const inner = new Error("inner hunter22");
    const error = new AggregateError([inner, "text hunter22", 7], "outer hunter22", {
      cause: { said: "hunter22" },
    });
    Object.assign(error, { detail: "detail hunter22" });
    maskError(error, mask);
    assert.equal(error.message, "outer ***");
    assert.doesNotMatch(String(error.stack), /hunter22/);
    assert.equal(inner.message, "inner ***");
    assert.deepEqual(error.errors.slice(1), ["text ***", 7]);
    assert.equal(error.cause, '{"said":"***"}');
    assert.equal((error as unknown as { detail: string }).detail, "detail ***");
  });

  it("keeps a carried value that shows no secret as it is", () => {
    const cause = Object.create(null);
    const error = new Error("plain", { cause });
    maskError(error, secretsMask(["hunter22"]));
    assert.equal(error.cause, cause);
  });
});
