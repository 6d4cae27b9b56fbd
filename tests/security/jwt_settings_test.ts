// The resource server's settings: pure, each rule checked against a reference over generated
// configurations.
import { before, describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import * as jose from "jose";
import { resolveConfig } from "../../src/config/application_config.ts";
import { ConfigError } from "../../src/config/config_error.ts";
import { ASYMMETRIC_ALGORITHMS } from "../../src/config/security_keys.ts";
import { readSettings } from "../../src/config/thaw_settings.ts";
import {
  clockSkew,
  DEFAULT_CLOCK_SKEW_MS,
  jwsAlgorithms,
  jwtSettings,
} from "../../src/security/jwt_settings.ts";
import { propertyOptions } from "../property.ts";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { bootstrap } from "../../mod.ts";
import { security } from "../../security.ts";
import { loadConfig } from "../../src/config/load_config.ts";
import { tempDir } from "../temp_dir.ts";

const read = (jwt: Record<string, unknown>) =>
  jwtSettings(
    readSettings(resolveConfig({ security: { oauth2: { resourceserver: { jwt } } } }, () => {
      return undefined;
    })),
  );

const WHERE = "application.yml:3: security.oauth2.resourceserver.jwt.jws-algorithms";

describe("jwsAlgorithms", () => {
  it("takes asymmetric algorithms only, in order, once each", () => {
    const algorithm = fc.oneof(
      fc.constantFrom(...ASYMMETRIC_ALGORITHMS),
      fc.constantFrom("none", "None", "HS256", "HS384", "HS512", "hs256", "rs256", "RS265", ""),
      fc.string({ maxLength: 8 }),
    );
    fc.assert(
      fc.property(fc.array(algorithm, { maxLength: 6 }), (given) => {
        const ok = given.length > 0 && given.every((alg) => ASYMMETRIC_ALGORITHMS.includes(alg));
        if (ok) {
          assert.deepEqual(jwsAlgorithms(given, WHERE), [...new Set(given)]);
          return;
        }
        assert.throws(() => jwsAlgorithms(given, WHERE), (error) => {
          assert.ok(error instanceof ConfigError);
          assert.ok(error.message.startsWith(`${WHERE}: `), error.message);
          const bad = given.find((alg) => !ASYMMETRIC_ALGORITHMS.includes(alg));
          if (bad?.toLowerCase() === "none") assert.match(error.message, /none is refused/);
          if (bad !== undefined && /^HS\d+$/i.test(bad)) {
            assert.match(error.message, /is refused: the keys are public/);
          }
          return true;
        });
      }),
      propertyOptions(),
    );
  });

  it("names the algorithm a typo was meant as", () => {
    assert.throws(() => jwsAlgorithms(["RS265"], WHERE), {
      message: `${WHERE}: unknown algorithm "RS265"; did you mean RS256?`,
    });
    assert.throws(() => jwsAlgorithms([], WHERE), {
      message: `${WHERE}: give at least one algorithm`,
    });
  });
});

describe("clockSkew", () => {
  it("reads a duration of up to an hour, 60 s when unset", () => {
    assert.equal(clockSkew(undefined, "k"), DEFAULT_CLOCK_SKEW_MS);
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 * 3_600_000 }), (ms) => {
        if (ms <= 3_600_000) {
          assert.equal(clockSkew(ms, "k"), ms);
          assert.equal(clockSkew(`${ms}ms`, "k"), ms);
          if (ms % 1000 === 0) assert.equal(clockSkew(`PT${ms / 1000}S`, "k"), ms);
        } else {
          assert.throws(
            () => clockSkew(ms, "k"),
            /^ConfigError: k: give milliseconds \(250\) or a duration/,
          );
        }
      }),
      propertyOptions(),
    );
    assert.throws(() => clockSkew("a minute", "k"), {
      message: 'k: give milliseconds (250) or a duration ("250ms", "5s", "10m", "1h"), at most ' +
        '3600000 ms, got "a minute"',
    });
    assert.throws(() => clockSkew(-1, "k"), ConfigError);
  });
});

describe("jwtSettings", () => {
  it("takes the keys from one source, and checks the issuer whenever issuer-uri is set", () => {
    const url = fc.constantFrom("https://id.example.com/realms/a", "http://127.0.0.1:8081");
    fc.assert(
      fc.property(
        fc.record({
          "issuer-uri": url,
          "jwk-set-uri": url.map((u) => `${u}/keys`),
          "public-key": fc.constant("-----BEGIN PUBLIC KEY-----"),
          "public-key-location": fc.constant("/etc/keys/issuer.pem"),
        }, { requiredKeys: [] }),
        (given) => {
          const sources = ["jwk-set-uri", "public-key-location", "public-key"]
            .filter((key) => key in given);
          if (sources.length > 1) {
            assert.throws(() => read(given), /: give one of .*: each is where the keys come from/);
            return;
          }
          const settings = read(given);
          const issuer = given["issuer-uri"];
          const expected = given["jwk-set-uri"] !== undefined
            ? { kind: "jwk-set", url: given["jwk-set-uri"] }
            : given["public-key-location"] !== undefined
            ? { kind: "public-key-location", path: given["public-key-location"] }
            : given["public-key"] !== undefined
            ? { kind: "public-key", pem: given["public-key"] }
            : issuer !== undefined
            ? { kind: "discovery", issuer }
            : undefined;
          assert.deepEqual(settings?.keys, expected);
          assert.equal(settings?.issuer, expected === undefined ? undefined : issuer);
        },
      ),
      propertyOptions(),
    );
  });

  it("reads the defaults, and the claims' names", () => {
    const defaults = read({ "jwk-set-uri": "https://id.example.com/keys" });
    assert.deepEqual(defaults, {
      keys: { kind: "jwk-set", url: "https://id.example.com/keys" },
      audiences: [],
      algorithms: ASYMMETRIC_ALGORITHMS,
      principalClaim: "sub",
      authorityPrefix: "SCOPE_",
      clockSkewMs: 60_000,
    });
    const named = read({
      "issuer-uri": "https://id.example.com",
      audiences: "orders",
      "jws-algorithms": ["ES256", "RS256", "ES256"],
      "principal-claim-name": "preferred_username",
      "authorities-claim-name": "permissions",
      "authority-prefix": "",
      "roles-claim-name": "realm_access.roles",
      "clock-skew": "5s",
    });
    assert.deepEqual(named?.audiences, ["orders"]);
    assert.deepEqual(named?.algorithms, ["ES256", "RS256"]);
    assert.equal(named?.principalClaim, "preferred_username");
    assert.equal(named?.authoritiesClaim, "permissions");
    assert.equal(named?.authorityPrefix, "");
    assert.equal(named?.rolesClaim, "realm_access.roles");
    assert.equal(named?.clockSkewMs, 5000);
    assert.equal(read({}), undefined);
  });

  it("refuses a key set URL that is not http(s), naming the key", () => {
    for (const bad of ["id.example.com", "file:///etc/keys.json", "javascript:alert(1)"]) {
      assert.throws(() => read({ "jwk-set-uri": bad }), {
        message:
          `config: security.oauth2.resourceserver.jwt.jwk-set-uri: give an http(s) URL, got ${
            JSON.stringify(bad)
          }`,
      });
    }
    assert.throws(
      () => read({ "issuer-uri": "ftp://id" }),
      /jwt\.issuer-uri: give an http\(s\) URL/,
    );
    assert.throws(
      () => read({ "issuer-uri": "https://id", "jws-algorithms": "none" }),
      /config: security\.oauth2\.resourceserver\.jwt\.jws-algorithms: none is refused/,
    );
  });
});

describe("jwtSettings over a profile", () => {
  // A key that imports: with one source or the other alone, the app would start.
  let PEM = "";
  before(async () => {
    PEM = await jose.exportSPKI((await jose.generateKeyPair("ES256")).publicKey);
  });
  const jwtFile = (lines: string[]) =>
    [
      "security:",
      "  oauth2:",
      "    resourceserver:",
      "      jwt:",
      ...lines.map((l) => `        ${l}`),
    ]
      .join("\n") + "\n";
  const withProfile = async (
    files: Record<string, string>,
    use: (config: Awaited<ReturnType<typeof loadConfig>>, dir: string) => Promise<void>,
  ) => {
    await using dir = await tempDir("thaw-jwt-profile-");
    for (const [name, text] of Object.entries(files)) await writeFile(join(dir.path, name), text);
    const config = await loadConfig(join(dir.path, "application.yml"), {
      env: {},
      profiles: "prod",
    });
    await use(config, dir.path);
  };

  it("stops bootstrap when a profile's key source joins one of the file it builds on", async () => {
    const cases = [
      ["issuer-uri: https://id.example.com", `public-key: ${JSON.stringify(PEM)}`, "issuer-uri"],
      [`public-key: ${JSON.stringify(PEM)}`, "issuer-uri: https://id.example.com", "public-key"],
      [
        "jwk-set-uri: https://id.example.com/keys",
        "public-key-location: /etc/key.pem",
        "jwk-set-uri",
      ],
    ];
    for (const [base, profile, unset] of cases) {
      await withProfile({
        "application.yml": jwtFile([base]),
        "application-prod.yml": jwtFile([profile]),
      }, async (config, dir) => {
        const [baseKey, profileKey] = [base, profile].map((line) => line.split(":")[0]);
        const where = (file: string, key: string) =>
          `${join(dir, file)}:5: security.oauth2.resourceserver.jwt.${key}`;
        await assert.rejects(bootstrap({ config, security: security() }), (error: Error) => {
          assert.ok(error instanceof ConfigError, String(error));
          assert.ok(error.message.includes(where("application.yml", baseKey)), error.message);
          assert.ok(
            error.message.includes(where("application-prod.yml", profileKey)),
            error.message,
          );
          assert.ok(error.message.includes(`(${unset}: ~)`), error.message);
          return true;
        });
      });
    }
  });

  it("takes a profile that unsets the other source, or sets issuer-uri beside its key", async () => {
    for (
      const profile of [["issuer-uri: ~", `public-key: ${JSON.stringify(PEM)}`], [
        "issuer-uri: https://id.example.com/prod",
        `public-key: ${JSON.stringify(PEM)}`,
      ]]
    ) {
      await withProfile({
        "application.yml": jwtFile(["issuer-uri: https://id.example.com"]),
        "application-prod.yml": jwtFile(profile),
      }, (config) => {
        const settings = jwtSettings(readSettings(config));
        assert.deepEqual(settings?.keys, { kind: "public-key", pem: PEM });
        assert.equal(
          settings?.issuer,
          profile[0] === "issuer-uri: ~" ? undefined : "https://id.example.com/prod",
        );
        return Promise.resolve();
      });
    }
  });
});
