// The sample users app secured: every route needs a bearer token of the dev issuer (its `dev`
// profile), each route the scope or role UserController names; the docs, the document and the
// health probes are open. The answers are RFC 6750's.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { generateKeyPair, importPKCS8, SignJWT } from "jose";
import { load } from "js-yaml";
import type { Application } from "../../mod.ts";
import { MemoryUserRepository } from "../../examples/users/storage/memory_user_repository.ts";
import { DEV_PUBLIC_KEY } from "../../examples/users/dev/dev_public_key.ts";
import { DEV_PRIVATE_KEY, devToken } from "../../examples/users/dev/dev_token.ts";
import { call } from "../helpers.ts";
import { bootstrapUsers, USERS_DIR } from "./users_storage.ts";

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const ada = { name: "Ada", email: "ada@example.com" };

describe("sample users app: secured", () => {
  let app: Application;
  before(async () => {
    app = await bootstrapUsers({}, [MemoryUserRepository]);
  });
  after(() => app?.close());

  it("answers 401 with a Bearer challenge to a request without a token, on every route", async () => {
    for (
      const [method, path] of [
        ["GET", "/users"],
        ["GET", "/users/1"],
        ["GET", "/users/search?email=ada@example.com"],
        ["POST", "/users"],
        ["PUT", "/users/1"],
        ["DELETE", "/users/1"],
        ["GET", "/actuator/mappings"],
      ]
    ) {
      const res = await call(
        app,
        method,
        path,
        method === "POST" || method === "PUT" ? { json: ada } : {},
      );
      assert.equal(res.status, 401, `${method} ${path}`);
      assert.equal(res.headers.get("www-authenticate"), "Bearer", `${method} ${path}`);
      await res.body?.cancel();
    }
  });

  it("answers 401 invalid_token to a token the dev key did not sign, an expired one, one for another audience", async () => {
    const { privateKey } = await generateKeyPair("ES256");
    const foreign = await new SignJWT({ scope: "users:read" })
      .setProtectedHeader({ alg: "ES256" })
      .setSubject("mallory")
      .setAudience("users")
      .setExpirationTime("5m")
      .sign(privateKey);
    const expired = await devToken({ scopes: ["users:read"], expiresIn: "-10m" });
    const otherAudience = await new SignJWT({ scope: "users:read" })
      .setProtectedHeader({ alg: "ES256" })
      .setSubject("dev")
      .setAudience("billing")
      .setExpirationTime("5m")
      .sign(await importDevKey());
    for (const token of [foreign, expired, otherAudience]) {
      const res = await call(app, "GET", "/users", { headers: bearer(token) });
      assert.equal(res.status, 401);
      assert.equal(res.headers.get("www-authenticate"), 'Bearer error="invalid_token"');
      assert.deepEqual(await res.json(), { error: "invalid_token" });
    }
  });

  it("lets users:read read, and answers 403 insufficient_scope to its writes", async () => {
    const reader = await devToken({ scopes: ["users:read"] });
    const listed = await call(app, "GET", "/users", { headers: bearer(reader) });
    assert.equal(listed.status, 200);
    assert.deepEqual(await listed.json(), { success: true, data: [] });
    const created = await call(app, "POST", "/users", { headers: bearer(reader), json: ada });
    assert.equal(created.status, 403);
    assert.equal(
      created.headers.get("www-authenticate"),
      'Bearer error="insufficient_scope", scope="users:write"',
    );
    await created.body?.cancel();
    const list = await call(app, "GET", "/users", { headers: bearer(reader) });
    assert.deepEqual((await list.json()).data, [], "the refused write stored nothing");
  });

  it("lets users:write create and update, but not read, and answers 403 to a delete without the role ADMIN", async () => {
    const writer = await devToken({ scopes: ["users:write"] });
    const created = await call(app, "POST", "/users", { headers: bearer(writer), json: ada });
    assert.equal(created.status, 201);
    const { data } = await created.json();
    const read = await call(app, "GET", `/users/${data.id}`, { headers: bearer(writer) });
    assert.equal(read.status, 403);
    assert.equal(
      read.headers.get("www-authenticate"),
      'Bearer error="insufficient_scope", scope="users:read"',
    );
    await read.body?.cancel();
    const both = await devToken({ scopes: ["users:read", "users:write"] });
    const refused = await call(app, "DELETE", `/users/${data.id}`, { headers: bearer(both) });
    assert.equal(refused.status, 403);
    await refused.body?.cancel();
    const admin = await devToken({ scopes: ["users:read"], roles: ["ADMIN"] });
    const deleted = await call(app, "DELETE", `/users/${data.id}`, { headers: bearer(admin) });
    assert.equal(deleted.status, 200);
    assert.deepEqual(await deleted.json(), { success: true, message: "User deleted successfully" });
  });

  it("serves its docs page, its OpenAPI document and its health to anyone", async () => {
    const document = await call(app, "GET", "/openapi.json");
    assert.equal(document.status, 200);
    assert.equal((await document.json()).info.title, "Users");
    const page = await call(app, "GET", "/docs");
    assert.equal(page.status, 200);
    await page.body?.cancel();
    for (const path of ["/actuator/health", "/actuator/health/liveness"]) {
      const res = await call(app, "GET", path);
      assert.equal(res.status, 200, path);
      assert.deepEqual(await res.json(), { status: "UP" });
    }
  });

  it("declares its bearer scheme and each route's scopes in its OpenAPI document", async () => {
    const document = await (await call(app, "GET", "/openapi.json")).json();
    assert.deepEqual(document.components.securitySchemes, {
      bearerAuth: { type: "http", scheme: "bearer", bearerFormat: "JWT" },
    });
    assert.deepEqual(document.paths["/users"].get.security, [{ bearerAuth: ["users:read"] }]);
    assert.deepEqual(document.paths["/users"].post.security, [{ bearerAuth: ["users:write"] }]);
  });

  it("trusts in its dev profile the public key the workers trust", async () => {
    const profile = load(await readFile(new URL("application-dev.yml", USERS_DIR), "utf8")) as {
      security: { oauth2: { resourceserver: { jwt: { "public-key": string } } } };
    };
    assert.equal(profile.security.oauth2.resourceserver.jwt["public-key"], DEV_PUBLIC_KEY);
  });
});

function importDevKey(): Promise<CryptoKey> {
  return importPKCS8(DEV_PRIVATE_KEY, "ES256");
}
