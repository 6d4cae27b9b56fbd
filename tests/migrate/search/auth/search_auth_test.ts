// A search connection's authentication as the configuration gives it, and authSetting. How it
// signs and authorizes each attempt is in authorize_test.ts.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { ConfigError } from "../../../../src/config/config_error.ts";
import { parseConfigText } from "../../../../src/config/yaml_config.ts";
import { authSetting } from "../../../../src/migrate/search/auth/search_auth.ts";
import {
  type SearchConnection,
  searchConnections,
} from "../../../../src/migrate/search/search_connection.ts";
import { propertyOptions } from "../../../property.ts";

// ---- configuration ----

const FILE = "application.yml";

function load(yaml: string, vars: Record<string, string> = {}): SearchConnection[] {
  const env = (name: string) => vars[name];
  return searchConnections(parseConfigText(yaml, FILE, undefined, env), "search", env);
}

function entry(lines: string): string {
  return `search:\n  - name: main\n    hosts: [https://search-d.eu-west-1.es.amazonaws.com]\n${lines}`;
}

function fails(yaml: string, pattern: RegExp, hidden: readonly string[] = [], vars = {}) {
  assert.throws(() => load(yaml, vars), (e: unknown) => {
    assert.ok(e instanceof ConfigError, String(e));
    assert.match(e.message, pattern);
    for (const s of hidden) assert.ok(!e.message.includes(s), `${s} shown in: ${e.message}`);
    return true;
  });
}

describe("search connection authentication config", () => {
  it("reads each method", () => {
    const [api] = load(entry("    api_key: ${K}\n"), { K: "a2V5OnNlY3JldA==" });
    assert.deepEqual(api.auth, { method: "api_key", apiKey: "a2V5OnNlY3JldA==" });
    const [bearer] = load(entry("    bearer_token: tok.en-_~\n"));
    assert.deepEqual(bearer.auth, { method: "bearer_token", token: "tok.en-_~" });
    const [basic] = load(entry("    username: u\n    password: p w\n"));
    assert.deepEqual(basic.auth, { method: "basic", username: "u", password: "p w" });
    assert.equal(basic.password, "p w");
    const [none] = load(entry(""));
    assert.equal(none.auth, undefined);
  });

  it("aws_sigv4: credentials from the config win, never mixed with the environment", () => {
    const [c] = load(
      entry(
        "    aws_sigv4:\n      region: ${AWS_REGION}\n      service: aoss\n" +
          "      access_key_id: ${ID}\n      secret_access_key: ${SECRET}\n      session_token: ${TOK}\n",
      ),
      {
        AWS_REGION: "eu-west-1",
        ID: "AKIACONFIG",
        SECRET: "config/secret",
        TOK: "config-token",
        AWS_ACCESS_KEY_ID: "AKIAENV",
        AWS_SECRET_ACCESS_KEY: "env-secret",
        AWS_SESSION_TOKEN: "env-token",
      },
    );
    assert.deepEqual(c.auth, {
      method: "aws_sigv4",
      region: "eu-west-1",
      service: "aoss",
      credentials: {
        accessKeyId: "AKIACONFIG",
        secretAccessKey: "config/secret",
        sessionToken: "config-token",
      },
    });
    const [noToken] = load(
      entry("    aws_sigv4: { region: us-east-1, access_key_id: AKIA1, secret_access_key: s }\n"),
      { AWS_SESSION_TOKEN: "env-token" },
    );
    assert.deepEqual(noToken.auth, {
      method: "aws_sigv4",
      region: "us-east-1",
      service: "es",
      credentials: { accessKeyId: "AKIA1", secretAccessKey: "s" },
    });
  });

  it("aws_sigv4: credentials from AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN", () => {
    const yaml = entry("    aws_sigv4: { region: eu-west-1, service: es }\n");
    const [c] = load(yaml, { AWS_ACCESS_KEY_ID: "AKIAENV", AWS_SECRET_ACCESS_KEY: "env/secret" });
    assert.deepEqual(c.auth, {
      method: "aws_sigv4",
      region: "eu-west-1",
      service: "es",
      credentials: { accessKeyId: "AKIAENV", secretAccessKey: "env/secret" },
    });
    const [t] = load(yaml, {
      AWS_ACCESS_KEY_ID: "AKIAENV",
      AWS_SECRET_ACCESS_KEY: "s",
      AWS_SESSION_TOKEN: "tok",
    });
    assert.equal(t.auth?.method === "aws_sigv4" && t.auth.credentials.sessionToken, "tok");
  });

  it("an empty value (an unset ${VAR:}) is no method, so the environment can choose", () => {
    const yaml = entry("    api_key: ${K:}\n    bearer_token: ${T:}\n");
    assert.equal(load(yaml)[0].auth, undefined);
    assert.deepEqual(load(yaml, { T: "t0k" })[0].auth, { method: "bearer_token", token: "t0k" });
  });

  it("errors name file:line: key and show no secret", () => {
    const s = "Sh0uld-N0t-Appear";
    fails(
      entry(`    username: u\n    password: ${s}\n    api_key: ${s}k\n`),
      /^application\.yml:6: search\[0\]\.api_key: api_key and username\/password are both given; a connection authenticates one way/,
      [s],
    );
    fails(
      entry(`    bearer_token: ${s}\n    aws_sigv4: { region: eu-west-1 }\n`),
      /^application\.yml:5: search\[0\]\.aws_sigv4: aws_sigv4 and bearer_token are both given/,
      [s],
    );
    fails(
      entry(`    api_key: ${s}\n    bearer_token: ${s}2\n`),
      /^application\.yml:5: search\[0\]\.bearer_token: bearer_token and api_key/,
      [s],
    );
    fails(
      entry("    aws_sigv4:\n      service: es\n"),
      /^application\.yml:4: search\[0\]\.aws_sigv4\.region is missing/,
    );
    fails(
      entry("    aws_sigv4:\n"),
      /^application\.yml:4: search\[0\]\.aws_sigv4\.region is missing/,
    );
    fails(
      entry("    aws_sigv4: { region: Europe }\n"),
      /^application\.yml:4: search\[0\]\.aws_sigv4\.region must be an AWS region such as eu-west-1, got "Europe"/,
    );
    fails(
      entry("    aws_sigv4:\n      region: eu-west-1\n      service: opensearch\n"),
      /^application\.yml:6: search\[0\]\.aws_sigv4\.service must be es \(Amazon OpenSearch Service\) or aoss \(OpenSearch Serverless\), got "opensearch"/,
    );
    fails(
      entry(`    aws_sigv4: ${s}\n`),
      /^application\.yml:4: search\[0\]\.aws_sigv4 must be a mapping \(region: eu-west-1, service: es or aoss\), got a string$/,
      [s],
    );
    fails(
      entry(`    aws_sigv4: [${s}]\n`),
      /search\[0\]\.aws_sigv4 must be a mapping .*got a list$/,
      [s],
    );
    fails(
      entry(`    aws_sigv4:\n      region: eu-west-1\n      secret_key: ${s}\n`),
      /^application\.yml:6: search\[0\]\.aws_sigv4\.secret_key is not an aws_sigv4 setting/,
      [s],
    );
    fails(
      entry("    aws_sigv4: { region: eu-west-1 }\n"),
      /^application\.yml:4: search\[0\]\.aws_sigv4 has no credentials: give access_key_id and secret_access_key .* or set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY/,
    );
    fails(
      entry("    aws_sigv4: { region: eu-west-1 }\n"),
      /AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not/,
      [s],
      { AWS_ACCESS_KEY_ID: s },
    );
    fails(
      entry("    aws_sigv4: { region: eu-west-1 }\n"),
      /AWS_SECRET_ACCESS_KEY is set but AWS_ACCESS_KEY_ID is not/,
      [s],
      { AWS_SECRET_ACCESS_KEY: s },
    );
    fails(
      entry(`    aws_sigv4:\n      region: eu-west-1\n      access_key_id: ${s}\n`),
      /^application\.yml:4: search\[0\]\.aws_sigv4\.secret_access_key is missing: access_key_id and secret_access_key go together/,
      [s],
    );
    fails(
      entry(`    aws_sigv4:\n      region: eu-west-1\n      session_token: ${s}\n`),
      /^application\.yml:6: search\[0\]\.aws_sigv4\.session_token needs access_key_id and secret_access_key/,
      [s],
    );
    fails(
      entry(`    api_key: [${s}]\n`),
      /^application\.yml:4: search\[0\]\.api_key must be a string$/,
      [s],
    );
    fails(
      entry("    bearer_token: 12345678\n"),
      /^application\.yml:4: search\[0\]\.bearer_token must be a string$/,
      ["12345678"],
    );
    // A line break would add a header of its own: refused, and not shown.
    for (const bad of [`${s}\nX-Injected: 1`, `${s}\r`, `${s} `, `é${s}`]) {
      fails(
        entry("    api_key: ${K}\n"),
        // The variable is named: the value came from it, not from the file.
        /^application\.yml:4: search\[0\]\.api_key \(from environment variable K\) must be printable ASCII without spaces or line breaks \(a trailing newline\?\); the value is not shown$/,
        [s],
        { K: bad },
      );
      fails(
        entry("    aws_sigv4: { region: eu-west-1 }\n"),
        /search\[0\]\.aws_sigv4: the environment variable AWS_SESSION_TOKEN must be printable ASCII/,
        [s],
        { AWS_ACCESS_KEY_ID: "AKIA", AWS_SECRET_ACCESS_KEY: "x", AWS_SESSION_TOKEN: bad },
      );
    }
  });

  it("under Deno without --allow-env: says which variables to allow", () => {
    const yaml = entry("    aws_sigv4: { region: eu-west-1 }\n");
    assert.throws(
      () =>
        searchConnections(parseConfigText(yaml, FILE, undefined, () => undefined), "search", () => {
          throw new Error('Requires env access to "AWS_ACCESS_KEY_ID"');
        }),
      /aws_sigv4 gives no access_key_id, and the environment cannot be read \(under Deno, run with --allow-env=AWS_ACCESS_KEY_ID,AWS_SECRET_ACCESS_KEY,AWS_SESSION_TOKEN\)/,
    );
  });

  // Any combination of methods with any values: one method is read as given, two or more are
  // refused, and no message ever holds a value.
  it("property: at most one method, and no value in any message", () => {
    const printable = fc.string({
      unit: fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)),
      minLength: 1,
      maxLength: 40,
    });
    const anyText = fc.string({
      unit: fc.oneof(
        {
          weight: 5,
          arbitrary: fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)),
        },
        { weight: 1, arbitrary: fc.constantFrom(" ", "\n", "\r", "\t", "é", "\u0000", "\u007f") },
      ),
      maxLength: 30,
    });
    const value = fc.oneof({ weight: 4, arbitrary: printable }, { weight: 1, arbitrary: anyText });
    const service = fc.constantFrom("es", "aoss", "ES", "opensearch", "");
    fc.assert(
      fc.property(
        fc.record({
          username: fc.option(fc.oneof(printable, fc.constant("")), { nil: undefined }),
          password: fc.option(value, { nil: undefined }),
          api_key: fc.option(value, { nil: undefined }),
          bearer_token: fc.option(value, { nil: undefined }),
          sigv4: fc.option(
            fc.record({
              region: fc.constantFrom("eu-west-1", "us-gov-west-1", "x", ""),
              service,
              id: fc.option(value, { nil: undefined }),
              secret: fc.option(value, { nil: undefined }),
              token: fc.option(value, { nil: undefined }),
            }),
            { nil: undefined },
          ),
          env: fc.record({
            id: fc.option(value, { nil: undefined }),
            secret: fc.option(value, { nil: undefined }),
          }),
        }),
        (c) => {
          // Every value goes through ${VAR}: as written, whatever YAML would make of it.
          const vars: Record<string, string> = {};
          const secretsOf: string[] = [];
          let n = 0;
          const ref = (v: string) => {
            vars[`V${++n}`] = `Sec-${v}`;
            secretsOf.push(`Sec-${v}`);
            return `"\${V${n}}"`;
          };
          let lines = "";
          if (c.username !== undefined) lines += `    username: ${JSON.stringify(c.username)}\n`;
          if (c.password !== undefined) lines += `    password: ${ref(c.password)}\n`;
          if (c.api_key !== undefined) lines += `    api_key: ${ref(c.api_key)}\n`;
          if (c.bearer_token !== undefined) lines += `    bearer_token: ${ref(c.bearer_token)}\n`;
          if (c.sigv4 !== undefined) {
            const s = c.sigv4;
            lines += `    aws_sigv4:\n      region: "${s.region}"\n      service: "${s.service}"\n`;
            if (s.id !== undefined) lines += `      access_key_id: ${ref(s.id)}\n`;
            if (s.secret !== undefined) lines += `      secret_access_key: ${ref(s.secret)}\n`;
            if (s.token !== undefined) lines += `      session_token: ${ref(s.token)}\n`;
          }
          if (c.env.id !== undefined) {
            (vars.AWS_ACCESS_KEY_ID = `Sec-${c.env.id}`, secretsOf.push(vars.AWS_ACCESS_KEY_ID));
          }
          if (c.env.secret !== undefined) {
            (vars.AWS_SECRET_ACCESS_KEY = `Sec-${c.env.secret}`,
              secretsOf.push(vars.AWS_SECRET_ACCESS_KEY));
          }
          const methods = [
            (c.username ?? "") !== "" || c.password !== undefined,
            c.api_key !== undefined,
            c.bearer_token !== undefined,
            c.sigv4 !== undefined,
          ].filter(Boolean).length;
          let connections: SearchConnection[];
          try {
            connections = load(entry(lines), vars);
          } catch (e) {
            assert.ok(e instanceof ConfigError, String(e));
            for (const s of secretsOf) {
              assert.ok(!e.message.includes(s), `${s} shown in: ${e.message}`);
            }
            assert.match(e.message, /^application\.yml:\d+: search\[0\]\./);
            return;
          }
          assert.ok(methods <= 1, "two methods were accepted");
          const auth = connections[0].auth;
          if (c.api_key !== undefined) {
            assert.deepEqual(auth, { method: "api_key", apiKey: `Sec-${c.api_key}` });
          }
          if (c.bearer_token !== undefined) {
            assert.deepEqual(auth, { method: "bearer_token", token: `Sec-${c.bearer_token}` });
          }
          if (c.sigv4 !== undefined) {
            assert.equal(auth?.method, "aws_sigv4");
            assert.ok(c.sigv4.service === "es" || c.sigv4.service === "aoss");
          }
          if (auth !== undefined && auth.method !== "basic") {
            // What goes into a header is a single line of printable ASCII.
            const values = auth.method === "aws_sigv4"
              ? Object.values(auth.credentials)
              : [auth.method === "api_key" ? auth.apiKey : auth.token];
            for (const v of values) assert.match(v, /^[\x21-\x7e]+$/);
          }
        },
      ),
      propertyOptions(),
    );
  });
});

describe("authSetting", () => {
  const at = (key: string) => `application.yml:3: ${key}`;

  it("takes one method, leaves an empty one to the environment, refuses two naming the second", () => {
    assert.deepEqual(authSetting({ api_key: "k1" }, at), { method: "api_key", apiKey: "k1" });
    assert.equal(authSetting({ api_key: "" }, at), undefined);
    assert.throws(
      () => authSetting({ username: "u", bearer_token: "t0ken" }, at),
      (e) =>
        e instanceof ConfigError &&
        e.message.startsWith(
          "application.yml:3: bearer_token: bearer_token and username/password",
        ) &&
        !e.message.includes("t0ken"),
    );
  });
});
