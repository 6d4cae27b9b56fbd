// A search connection's authentication at work: SigV4 against the published AWS suite,
// authorize() checked by an independent verifier, and the SearchClient signing each attempt. How
// the configuration gives it is in search_auth_test.ts.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { authorize, signV4 } from "../../../../src/migrate/search/auth/authorize.ts";
import type {
  AwsCredentials,
  SearchAuth,
} from "../../../../src/migrate/search/auth/search_auth.ts";
import { errorDetail, SearchClient } from "../../../../src/migrate/search/http/search_client.ts";
import type { SearchConnection } from "../../../../src/migrate/search/search_connection.ts";
import type { Transport } from "../../../../src/migrate/search/http/transport.ts";
import { type SigV4Check, sigV4Problem } from "../auth_server.ts";

// The AWS Signature Version 4 test suite (aws-sig-v4-test-suite, as the AWS SDK for JavaScript
// carries it in @aws-sdk/signature-v4's suite.fixture): its credentials, scope and time, and the
// published Authorization of each case. Only cases whose request line is what a client sends (an
// ASCII path) are here: get-utf8 writes a raw "ሴ" in its request line, which no HTTP client sends.
const SUITE = {
  region: "us-east-1",
  service: "service",
  credentials: {
    accessKeyId: "AKIDEXAMPLE",
    secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
  },
};
const SUITE_TIME = new Date("2015-08-30T12:36:00Z");
const SCOPE = "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request";
const STS_TOKEN =
  "AQoDYXdzEPT//////////wEXAMPLEtc764bNrC9SAPBSM22wDOk4x4HIZ8j4FZTwdQWLWsKWHGBuFqwAeMicRXmxfpSPfIeoIYRqTflfKD8YUuwthAx7mSEI/qkPpKPi/kMcGdQrmGdeehM4IC1NtBmUpp2wUE8phUZampKsburEDy0KPkyQDYwT7WZ0wq5VSXDvp75YU9HFvlRd8Tx6q6fE8YQcHNVXAkiY9q6d+xo0rKwT38xVqr7ZD0u0iPPkUL64lIZbqBAz+scqKmlzm8FDrypNC9Yjc8fPOLn9FX9KSYvKTr4rvx3iSIlTJabIQwj2ICCR/oLxBA==";
const UNRESERVED = "-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

const VECTORS: {
  name: string;
  method: string;
  url: string;
  headers?: Record<string, string>;
  body?: string;
  sessionToken?: string;
  authorization: string;
}[] = [
  {
    name: "get-vanilla",
    method: "GET",
    url: "https://example.amazonaws.com/",
    authorization:
      "SignedHeaders=host;x-amz-date, Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31",
  },
  {
    name: "get-vanilla-query-order-key-case",
    method: "GET",
    url: "https://example.amazonaws.com/?Param2=value2&Param1=value1",
    authorization:
      "SignedHeaders=host;x-amz-date, Signature=b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500",
  },
  {
    name: "get-unreserved",
    method: "GET",
    url: `https://example.amazonaws.com/${UNRESERVED}`,
    authorization:
      "SignedHeaders=host;x-amz-date, Signature=07ef7494c76fa4850883e2b006601f940f8a34d404d0cfa977f52a65bbf5f24f",
  },
  {
    name: "get-vanilla-query-unreserved",
    method: "GET",
    url: `https://example.amazonaws.com/?${UNRESERVED}=${UNRESERVED}`,
    authorization:
      "SignedHeaders=host;x-amz-date, Signature=9c3e54bfcdf0b19771a7f523ee5669cdf59bc7cc0884027167c21bb143a40197",
  },
  {
    name: "get-vanilla-utf8-query",
    method: "GET",
    url: "https://example.amazonaws.com/?ሴ=bar",
    authorization:
      "SignedHeaders=host;x-amz-date, Signature=2cdec8eed098649ff3a119c94853b13c643bcf08f8b0a1d91e12c9027818dd04",
  },
  {
    name: "post-vanilla",
    method: "POST",
    url: "https://example.amazonaws.com/",
    authorization:
      "SignedHeaders=host;x-amz-date, Signature=5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b",
  },
  {
    name: "post-vanilla-query",
    method: "POST",
    url: "https://example.amazonaws.com/?Param1=value1",
    authorization:
      "SignedHeaders=host;x-amz-date, Signature=28038455d6de14eafc1f9222cf5aa6f1a96197d7deb8263271d420d138af7f11",
  },
  {
    name: "post-header-key-sort",
    method: "POST",
    url: "https://example.amazonaws.com/",
    headers: { "My-Header1": "value1" },
    authorization:
      "SignedHeaders=host;my-header1;x-amz-date, Signature=c5410059b04c1ee005303aed430f6e6645f61f4dc9e1461ec8f8916fdf18852c",
  },
  {
    name: "post-header-value-case",
    method: "POST",
    url: "https://example.amazonaws.com/",
    headers: { "My-Header1": "VALUE1" },
    authorization:
      "SignedHeaders=host;my-header1;x-amz-date, Signature=cdbc9802e29d2942e5e10b5bccfdd67c5f22c7c4e8ae67b53629efa58b974b7d",
  },
  {
    name: "post-x-www-form-urlencoded",
    method: "POST",
    url: "https://example.amazonaws.com/",
    headers: { "Content-Type": "application/x-www-form-urlencoded" },
    body: "Param1=value1",
    authorization:
      "SignedHeaders=content-type;host;x-amz-date, Signature=ff11897932ad3f4e8b18135d722051e5ac45fc38421b1da7b9d196a0fe09473a",
  },
  {
    name: "post-x-www-form-urlencoded-parameters",
    method: "POST",
    url: "https://example.amazonaws.com/",
    headers: { "Content-Type": "application/x-www-form-urlencoded; charset=utf8" },
    body: "Param1=value1",
    authorization:
      "SignedHeaders=content-type;host;x-amz-date, Signature=1a72ec8f64bd914b0e42e42607c7fbce7fb2c7465f63e3092b3b0d39fa77a6fe",
  },
  {
    name: "post-sts-header-before",
    method: "POST",
    url: "https://example.amazonaws.com/",
    sessionToken: STS_TOKEN,
    authorization:
      "SignedHeaders=host;x-amz-date;x-amz-security-token, Signature=85d96828115b5dc0cfc3bd16ad9e210dd772bbebba041836c64533a82be05ead",
  },
];

describe("SigV4: the published AWS test suite", () => {
  for (const v of VECTORS) {
    it(v.name, async () => {
      const credentials: AwsCredentials = {
        ...SUITE.credentials,
        ...(v.sessionToken === undefined ? {} : { sessionToken: v.sessionToken }),
      };
      const headers = await signV4(
        { method: v.method, url: new URL(v.url), headers: v.headers ?? {}, body: v.body ?? "" },
        { ...SUITE, credentials },
        SUITE_TIME,
      );
      assert.equal(headers.authorization, `${SCOPE}, ${v.authorization}`);
      assert.equal(headers["x-amz-date"], "20150830T123600Z");
      assert.equal(headers["x-amz-security-token"], v.sessionToken);
      assert.equal(headers.host, undefined, "the runtime sets the host from the URL");
    });
  }
});

// ---- authorize: one attempt on one host, checked by an independent verifier ----

const KEY = {
  accessKeyId: "AKIAUNITTESTKEY00001",
  secretAccessKey: "unit/Secret+Key0000000000000000000000000",
};
const TOKEN = "IQoJb3JpZ2luX2VjEXAMPLEsessionTOKEN/with+slashes==";
const NOW = new Date("2026-03-01T10:20:30.456Z");

function sigv4(service: "es" | "aoss", token?: string): SearchAuth {
  return {
    method: "aws_sigv4",
    region: "eu-west-1",
    service,
    credentials: { ...KEY, ...(token === undefined ? {} : { sessionToken: token }) },
  };
}

function check(service: string, token?: string): SigV4Check {
  return {
    region: "eu-west-1",
    service,
    keys: new Map([[KEY.accessKeyId, {
      secretAccessKey: KEY.secretAccessKey,
      ...(token === undefined ? {} : { sessionToken: token }),
    }]]),
  };
}

/** What a server receiving `url` with `headers` and `body` makes of its signature. */
function verify(
  c: SigV4Check,
  method: string,
  url: URL,
  headers: Record<string, string>,
  body = "",
) {
  return sigV4Problem(
    c,
    { method, path: url.pathname + url.search, headers: { ...headers, host: url.host }, body },
    url.host,
    NOW,
  );
}

describe("authorize", () => {
  it("basic, api_key and bearer_token: exactly one Authorization header", async () => {
    const url = new URL("http://h:9200/x");
    const cases: [SearchAuth, string][] = [
      [
        { method: "basic", username: "admin", password: "pw:é" },
        `Basic ${btoa("admin:pw:\u00c3\u00a9")}`,
      ],
      [{
        method: "api_key",
        apiKey: "VnVhQ2ZHY0JDZGJrUW0tZTVhT3g6dWkybHAyYXhUTm1zeWFrdzl0dk5udw==",
      }, "ApiKey VnVhQ2ZHY0JDZGJrUW0tZTVhT3g6dWkybHAyYXhUTm1zeWFrdzl0dk5udw=="],
      [
        { method: "bearer_token", token: "eyJhbGciOi.eyJzdWIiOi.sig-_" },
        "Bearer eyJhbGciOi.eyJzdWIiOi.sig-_",
      ],
    ];
    for (const [auth, header] of cases) {
      const out = await authorize(auth, { method: "GET", url, body: undefined });
      assert.deepEqual(out.headers, { authorization: header });
      assert.equal(out.url.href, url.href);
    }
    assert.deepEqual(
      (await authorize(undefined, { method: "GET", url, body: undefined })).headers,
      {},
    );
  });

  for (const service of ["es", "aoss"] as const) {
    for (const token of [undefined, TOKEN]) {
      it(`aws_sigv4 ${service}${token ? " with a session token" : ""}: verified by @smithy/signature-v4`, async () => {
        const body = JSON.stringify({ name: "café", n: 1 });
        const out = await authorize(
          sigv4(service, token),
          {
            method: "POST",
            url: new URL("https://search-d.eu-west-1.es.amazonaws.com/logs/_doc"),
            body,
          },
          () => NOW,
        );
        assert.equal(out.headers["x-amz-date"], "20260301T102030Z", "the injected clock");
        assert.match(out.headers["x-amz-content-sha256"], /^[0-9a-f]{64}$/);
        assert.equal(out.headers["x-amz-security-token"], token);
        const signed = token
          ? "host;x-amz-content-sha256;x-amz-date;x-amz-security-token"
          : "host;x-amz-content-sha256;x-amz-date";
        assert.match(
          out.headers.authorization,
          new RegExp(`/eu-west-1/${service}/aws4_request, SignedHeaders=${signed}, `),
        );
        assert.equal(
          await verify(check(service, token), "POST", out.url, out.headers, body),
          undefined,
        );
        // Any change to what was signed is refused.
        assert.equal(
          await verify(check(service, token), "POST", out.url, out.headers, body + " "),
          "x-amz-content-sha256 is not the body's",
        );
        assert.equal(
          await verify(
            check(service === "es" ? "aoss" : "es", token),
            "POST",
            out.url,
            out.headers,
            body,
          ),
          `service ${service}, expected ${service === "es" ? "aoss" : "es"}`,
        );
        assert.equal(
          await verify(check(service, token), "PUT", out.url, out.headers, body),
          "signature mismatch",
        );
      });
    }
  }

  it("aws_sigv4: the URL sent is the URL signed, percent-encoded names and odd queries included", async () => {
    const paths = [
      "/caf%C3%A9-idx/_doc/a(1)!*'~:@,;=$&b%2Bc%25d?refresh=true",
      "/_index_template/t%C3%A9?b=x+y&a=(1)&=z&pretty&a=%2B&c=%E1%88%B4",
      "/?",
    ];
    for (const path of paths) {
      const url = new URL(`http://127.0.0.1:9200${path}`);
      const out = await authorize(sigv4("es"), { method: "GET", url, body: undefined }, () => NOW);
      assert.equal(out.url.pathname, url.pathname, "the path is sent as given");
      assert.doesNotMatch(out.url.search, /[+!'()*]|&=/, "the query is written as it is signed");
      // Parsed back the same, but for the nameless parameter aws4fetch does not sign.
      assert.deepEqual(
        [...out.url.searchParams],
        [...url.searchParams].filter(([k]) => k !== ""),
      );
      assert.equal(await verify(check("es"), "GET", out.url, out.headers), undefined, path);
    }
  });

  it("aws_sigv4: a signature is made for one host; another host refuses it", async () => {
    const attempt = (host: string) =>
      authorize(
        sigv4("es"),
        { method: "GET", url: new URL(`http://${host}/x`), body: undefined },
        () => NOW,
      );
    const a = await attempt("127.0.0.1:9201");
    const b = await attempt("127.0.0.1:9202");
    assert.notEqual(a.headers.authorization, b.headers.authorization);
    assert.equal(await verify(check("es"), "GET", b.url, b.headers), undefined);
    assert.equal(
      await sigV4Problem(
        check("es"),
        { method: "GET", path: "/x", headers: { ...a.headers, host: "127.0.0.1:9202" }, body: "" },
        "127.0.0.1:9202",
        NOW,
      ),
      "signature mismatch",
    );
  });
});

// ---- the client: each attempt signed for its host, secrets masked in what comes back ----

function connection(hosts: string[], auth: SearchAuth): SearchConnection {
  return {
    name: "c",
    hosts: hosts.map((h) => new URL(h)),
    auth,
    sslVerification: true,
    timeoutMs: 5000,
    connectTimeoutMs: 5000,
    proxy: undefined,
    migrationsEnabled: true,
    strictOrder: false,
    validateOnMigrate: false,
    recordsIndex: "framework_migrations",
    lockLeaseMs: 120_000,
  };
}

interface Attempt {
  readonly url: URL;
  readonly headers: Record<string, string>;
  readonly body: string;
  readonly stream: boolean;
}

/** A transport that refuses connections to `refused` hosts and answers `answer` elsewhere. */
function fake(attempts: Attempt[], refused: string[], answer: () => Response): Transport {
  return {
    close() {},
    fetch: async (url, init) => {
      const stream = init.body instanceof ReadableStream;
      const body = init.body === undefined ? "" : await new Response(init.body).text();
      attempts.push({ url, headers: init.headers as Record<string, string>, body, stream });
      if (refused.includes(url.host)) {
        throw Object.assign(new TypeError("fetch failed"), { cause: { code: "ECONNREFUSED" } });
      }
      return answer();
    },
  };
}

describe("SearchClient with an authentication method", () => {
  it("signs the retry for the second host, a stream body (non-repeatable) included", async () => {
    const attempts: Attempt[] = [];
    const client = new SearchClient(
      connection(["http://127.0.0.1:1", "http://127.0.0.1:2"], sigv4("aoss", TOKEN)),
      fake(attempts, ["127.0.0.1:1"], () => new Response('{"result":"created"}', { status: 201 })),
      { now: () => NOW },
    );
    const doc = { title: "naïve", n: 2 };
    const response = await client.send("POST", "/my%C3%A9idx/_doc?refresh=true", doc, {
      repeatable: false,
    });
    assert.equal(response.status, 201);
    assert.equal(attempts.length, 2);
    assert.deepEqual(attempts.map((a) => a.url.host), ["127.0.0.1:1", "127.0.0.1:2"]);
    assert.ok(attempts.every((a) => a.stream), "sent once: as a stream");
    assert.notEqual(attempts[0].headers.authorization, attempts[1].headers.authorization);
    const [first, second] = attempts;
    assert.equal(second.body, JSON.stringify(doc));
    assert.equal(
      await verify(check("aoss", TOKEN), "POST", second.url, second.headers, second.body),
      undefined,
    );
    assert.equal(
      await verify(check("aoss", TOKEN), "POST", first.url, first.headers, first.body),
      undefined,
    );
    // The first host's signature, had it been reused on the second host, would be refused.
    assert.equal(
      await sigV4Problem(
        check("aoss", TOKEN),
        {
          method: "POST",
          path: second.url.pathname + second.url.search,
          headers: { ...first.headers, host: second.url.host },
          body: second.body,
        },
        second.url.host,
        NOW,
      ),
      "signature mismatch",
    );
    assert.equal(second.headers.accept, "application/json");
    assert.equal(second.headers["content-type"], "application/json");
  });

  const secrets = {
    api: "Api-KEY-SeCrEt-0123456789/+=",
    bearer: "eyJbearer.SECRET-token.xyz",
    id: "AKIAMASKEDKEY0000001",
    secret: "masked/Secret+AccessKey000000000000000000",
    token: "Session/Token+MASKED==",
    password: 'pa"ss/wo rd-MASKED',
  };
  const auths: SearchAuth[] = [
    { method: "api_key", apiKey: secrets.api },
    { method: "bearer_token", token: secrets.bearer },
    { method: "basic", username: "admin", password: secrets.password },
    {
      method: "aws_sigv4",
      region: "eu-west-1",
      service: "es",
      credentials: {
        accessKeyId: secrets.id,
        secretAccessKey: secrets.secret,
        sessionToken: secrets.token,
      },
    },
  ];
  const all = Object.values(secrets);

  function assertMasked(text: string) {
    for (const s of all) {
      for (const form of [s, encodeURIComponent(s), JSON.stringify(s).slice(1, -1)]) {
        assert.ok(!text.includes(form), `${form} shown in: ${text}`);
      }
    }
    // Basic's header value holds the password.
    assert.ok(!text.includes(btoa(`admin:${secrets.password}`)), text);
  }

  for (const auth of auths) {
    it(`${auth.method}: an error body echoing the request's headers shows no secret`, async () => {
      let sent: Record<string, string> = {};
      const echoes: ((h: Record<string, string>) => Response)[] = [
        (h) =>
          Response.json({
            error: {
              type: "security_exception",
              reason: `rejected Authorization: ${h.authorization}; token ${
                h["x-amz-security-token"]
              }`,
              header: { [h.authorization]: h["x-amz-security-token"] ?? "" },
            },
            status: 401,
          }, { status: 401 }),
        // Text, the secret across the 300 characters kept: masked before it is cut.
        (h) =>
          new Response(
            `${"x".repeat(270)} ${h["x-amz-security-token"] ?? ""}${h.authorization} and more`,
            {
              status: 403,
            },
          ),
        (h) =>
          Response.json({
            message: `The security token ${
              h["x-amz-security-token"]
            } ${h.authorization} is invalid.`,
          }, { status: 403 }),
        // Escaped as some servers escape JSON ("\/").
        (h) =>
          new Response(
            `{"error":"bad ${
              JSON.stringify(h.authorization).slice(1, -1).replaceAll("/", "\\/")
            }"}`,
            {
              status: 401,
            },
          ),
      ];
      for (const echo of echoes) {
        const client = new SearchClient(connection(["http://127.0.0.1:3"], auth), {
          close() {},
          fetch: (_url, init) => {
            sent = init.headers as Record<string, string>;
            return Promise.resolve(echo(sent));
          },
        });
        const response = await client.send("GET", "/_search");
        assert.ok(response.status >= 400);
        const text = JSON.stringify(response.body) + errorDetail(response.body);
        assertMasked(text);
        assert.match(text, /\*\*\*/);
      }
      // What was sent did carry the credentials.
      assert.ok(sent.authorization.length > 10);
    });

    it(`${auth.method}: a transport error quoting a header shows no secret`, async () => {
      const client = new SearchClient(connection(["http://127.0.0.1:4"], auth), {
        close() {},
        fetch: (_url, init) => {
          const h = init.headers as Record<string, string>;
          return Promise.reject(
            new TypeError(`invalid header value ${h.authorization} ${h["x-amz-security-token"]}`),
          );
        },
      });
      await assert.rejects(client.send("GET", "/x"), (e: Error) => {
        assertMasked(e.message);
        assert.match(e.message, /no host of "c" answered/);
        return true;
      });
    });
  }

  it("a connection made in code with a line break in its key: nothing sent, the key not shown", async () => {
    let sent = 0;
    const key = "Injected-KEY\r\nX-Admin: true";
    const client = new SearchClient(
      connection(["http://127.0.0.1:6"], { method: "api_key", apiKey: key }),
      {
        close() {},
        fetch: () => (sent++, Promise.resolve(Response.json({}))),
      },
    );
    await assert.rejects(client.send("PUT", "/x", {}), (e: Error) => {
      assert.equal(e.name, "SearchTransportError");
      assert.match(
        e.message,
        /^PUT \/x: not sent: its authentication for http:\/\/127\.0\.0\.1:6 failed \(the authorization header would hold a line break/,
      );
      assert.ok(!e.message.includes("Injected-KEY"), e.message);
      assert.equal(e.cause, undefined);
      return true;
    });
    assert.equal(sent, 0);
  });

  it("basic: a short (demo) password is not masked in the cluster's own words; its header is", async () => {
    const auth: SearchAuth = { method: "basic", username: "admin", password: "admin" };
    const client = new SearchClient(connection(["http://127.0.0.1:7"], auth), {
      close() {},
      fetch: (_url, init) =>
        Promise.resolve(Response.json({
          error: {
            type: "security_exception",
            reason: `no permissions for [indices:admin/create] and User [name=admin] (${
              (init.headers as Record<string, string>).authorization
            })`,
          },
        }, { status: 403 })),
    });
    assert.equal(
      errorDetail((await client.send("PUT", "/x", {})).body),
      "security_exception: no permissions for [indices:admin/create] and User [name=admin] (Basic ***)",
    );
  });

  it("a success is returned as it came: a record is never altered by masking", async () => {
    const auth: SearchAuth = { method: "api_key", apiKey: "abc" };
    const client = new SearchClient(connection(["http://127.0.0.1:5"], auth), {
      close() {},
      fetch: () => Promise.resolve(Response.json({ path: "abc/abc.json" })),
    });
    assert.deepEqual((await client.send("GET", "/x")).body, { path: "abc/abc.json" });
  });
});
