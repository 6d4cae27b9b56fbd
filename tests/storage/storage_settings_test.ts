// The `storage:` list: each store by kind, its defaults, and every wrong entry refused naming it.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { resolveConfig } from "../../src/config/application_config.ts";
import { ConfigError } from "../../src/config/config_error.ts";
import { DEFAULT_STORE, storeSettings } from "../../src/storage/storage_settings.ts";
import { propertyOptions } from "../property.ts";

const noEnv = () => undefined;
const read = (storage: unknown, env: (name: string) => string | undefined = noEnv) =>
  storeSettings(resolveConfig({ storage } as Record<string, unknown>, noEnv), env);

describe("storeSettings", () => {
  it("is the disk's ./data/storage, named storage, when no store is listed", () => {
    assert.deepEqual(storeSettings(resolveConfig({}, noEnv), noEnv), [DEFAULT_STORE]);
    assert.deepEqual(DEFAULT_STORE, {
      kind: "file",
      name: "storage",
      primary: true,
      folder: "./data/storage",
    });
  });

  it("reads each kind, the only store primary unasked", () => {
    assert.deepEqual(read([{ name: "files", url: "file:/srv/files" }]), [
      { kind: "file", name: "files", primary: true, folder: "/srv/files" },
    ]);
    const [s3, r2] = read([
      {
        name: "uploads",
        url: "s3://my-bucket",
        endpoint: "http://127.0.0.1:9310/",
        "path-style": true,
        "access-key-id": "id",
        "secret-access-key": "secret",
        prefix: "app/",
        timeout: "5s",
        primary: true,
      },
      { name: "edge", url: "r2:UPLOADS" },
    ]);
    assert.deepEqual(s3, {
      kind: "s3",
      name: "uploads",
      primary: true,
      bucket: "my-bucket",
      region: "us-east-1",
      endpoint: "http://127.0.0.1:9310",
      pathStyle: true,
      accessKeyId: "id",
      secretAccessKey: "secret",
      sessionToken: undefined,
      prefix: "app/",
      timeoutMs: 5000,
    });
    assert.deepEqual(r2, { kind: "r2", name: "edge", primary: false, binding: "UPLOADS" });
  });

  it("takes credentials and the region from AWS's variables when the entry has none", () => {
    const env: Record<string, string> = {
      AWS_ACCESS_KEY_ID: "env-id",
      AWS_SECRET_ACCESS_KEY: "env-secret",
      AWS_SESSION_TOKEN: "env-token",
      AWS_REGION: "eu-west-3",
    };
    const [store] = read([{ name: "s", url: "s3://bucket-1" }], (name) => env[name]);
    assert.equal(store?.kind, "s3");
    if (store?.kind !== "s3") return;
    assert.deepEqual(
      [store.accessKeyId, store.secretAccessKey, store.sessionToken, store.region],
      ["env-id", "env-secret", "env-token", "eu-west-3"],
    );
    // The environment's session token belongs to the environment's keys, not to the entry's.
    const [own] = read(
      [{ name: "s", url: "s3://bucket-1", "access-key-id": "a", "secret-access-key": "b" }],
      (name) => env[name],
    );
    assert.equal(own?.kind === "s3" && own.sessionToken, undefined);
  });

  it("refuses every wrong entry, naming the key", () => {
    const refusals: [unknown, RegExp][] = [
      ["file:x", /storage is a list of stores/],
      [[], /storage is a list of stores/],
      [[42], /storage\[0\] is a mapping with name and url/],
      [[{ url: "file:x" }], /storage\[0\]\.name is a bean name/],
      [[{ name: "a b", url: "file:x" }], /storage\[0\]\.name is a bean name/],
      [
        [{ name: "a", url: "ftp://x" }],
        /storage\[0\]\.url is file:<folder>, s3:\/\/<bucket> or r2:<BINDING>, got "ftp:\/\/x"/,
      ],
      [[{ name: "a", url: "file:" }], /storage\[0\]\.url names a folder/],
      [
        [{ name: "a", url: "file:x", region: "eu" }],
        /storage\[0\]\.region is not a setting of a file store/,
      ],
      [[{ name: "a", url: "r2:not-an-identifier" }], /storage\[0\]\.url names a binding/],
      [[{ name: "a", url: "s3://Bad_Bucket" }], /storage\[0\]\.url names a bucket/],
      [[{ name: "a", url: "s3://bucket" }], /needs access-key-id and secret-access-key/],
      [
        [{
          name: "a",
          url: "s3://bucket",
          "access-key-id": "x",
          "secret-access-key": "y",
          prefix: "p",
        }],
        /storage\[0\]\.prefix ends with "\/"/,
      ],
      [
        [{
          name: "a",
          url: "s3://bucket",
          "access-key-id": "x",
          "secret-access-key": "y",
          endpoint: "http://h/path",
        }],
        /storage\[0\]\.endpoint is an origin/,
      ],
      [
        [{
          name: "a",
          url: "s3://bucket",
          "access-key-id": "x",
          "secret-access-key": "y",
          timeout: "soon",
        }],
        /storage\[0\]\.timeout/,
      ],
      [[{ name: "a", url: "file:x", primary: "yes" }], /storage\[0\]\.primary is true or false/],
      [
        [{ name: "a", url: "file:x" }, { name: "a", url: "file:y" }],
        /storage\[1\]\.name: "a" is used twice/,
      ],
      [
        [{ name: "a", url: "file:x", primary: true }, { name: "b", url: "file:y", primary: true }],
        /only one store is primary, got a, b/,
      ],
    ];
    for (const [storage, message] of refusals) {
      assert.throws(() => read(storage), (error: unknown) => {
        assert.ok(error instanceof ConfigError, String(error));
        assert.match(error.message, message, JSON.stringify(storage));
        return true;
      });
    }
  });

  it("never shows a credential it refuses", () => {
    for (const key of ["access-key-id", "secret-access-key", "session-token"]) {
      const entry = {
        name: "a",
        url: "s3://bucket",
        "access-key-id": "x",
        "secret-access-key": "y",
        [key]: 123456,
      };
      assert.throws(() => read([entry]), (error: Error) => {
        assert.match(error.message, new RegExp(`storage\\[0\\]\\.${key} is text`));
        assert.doesNotMatch(error.message, /123456/);
        return true;
      });
    }
  });

  it("never throws anything but a ConfigError, whatever an entry holds", () => {
    fc.assert(
      fc.property(fc.anything(), (storage) => {
        try {
          read(storage);
        } catch (error) {
          assert.ok(error instanceof ConfigError, String(error));
        }
      }),
      propertyOptions(300),
    );
  });
});
