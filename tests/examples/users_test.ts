import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { type Application, bootstrap } from "../../mod.ts";
import { UserService } from "../../examples/users/src/user_service.ts";
import { call } from "../helpers.ts";

const config = new URL("../../examples/users/application.yml", import.meta.url);

// A fresh app per test: the storage is in memory.
function usersApp(): Promise<Application> {
  return bootstrap({ config, env: {} });
}

async function create(app: Application, name: string, email: string) {
  const res = await call(app, "POST", "/users", { json: { name, email } });
  return { res, body: await res.json() };
}

describe("sample users app (seed 4.2)", () => {
  it("GET /users lists users", async () => {
    const app = await usersApp();
    assert.deepEqual(await (await call(app, "GET", "/users")).json(), { success: true, data: [] });
    await create(app, "Ada", "ada@example.com");
    await create(app, "Bob", "bob@example.com");
    const res = await call(app, "GET", "/users");
    assert.equal(res.status, 200);
    const body = await res.json();
    assert.equal(body.success, true);
    assert.deepEqual(body.data.map((u: { email: string }) => u.email), [
      "ada@example.com",
      "bob@example.com",
    ]);
  });

  it("POST /users creates (201 + Location), and refuses a taken email (409)", async () => {
    const app = await usersApp();
    const { res, body } = await create(app, "Ada", "ada@example.com");
    assert.equal(res.status, 201);
    assert.equal(res.headers.get("location"), "/users/1");
    assert.deepEqual(body, {
      success: true,
      data: { id: 1, name: "Ada", email: "ada@example.com" },
      message: "User created successfully",
    });
    const dup = await create(app, "Other", "ada@example.com");
    assert.equal(dup.res.status, 409);
    assert.deepEqual(dup.body, { success: false, message: "Email already exists" });
  });

  it("POST /users reports a failure with the failure text and the exception message (500)", async () => {
    const app = await usersApp();
    const { res, body } = await create(app, "", "nobody@example.com");
    assert.equal(res.status, 500);
    assert.deepEqual(body, {
      success: false,
      message: "Failed to create user: name must be a non-empty string",
    });
  });

  it("GET /users/{id} finds (200) or says not found (404)", async () => {
    const app = await usersApp();
    await create(app, "Ada", "ada@example.com");
    const found = await call(app, "GET", "/users/1");
    assert.equal(found.status, 200);
    assert.deepEqual(await found.json(), {
      success: true,
      data: { id: 1, name: "Ada", email: "ada@example.com" },
    });
    const missing = await call(app, "GET", "/users/99");
    assert.equal(missing.status, 404);
    assert.deepEqual(await missing.json(), { success: false, message: "User not found" });
    assert.equal((await call(app, "GET", "/users/abc")).status, 400);
  });

  it("PUT /users/{id} replaces with the path id, or says not found", async () => {
    const app = await usersApp();
    await create(app, "Ada", "ada@example.com");
    await create(app, "Bob", "bob@example.com");
    const res = await call(app, "PUT", "/users/1", {
      json: { id: 77, name: "Ada L.", email: "ada@l.org" },
    });
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), {
      success: true,
      data: { id: 1, name: "Ada L.", email: "ada@l.org" },
      message: "User updated successfully",
    });
    assert.deepEqual(await (await call(app, "GET", "/users/1")).json(), {
      success: true,
      data: { id: 1, name: "Ada L.", email: "ada@l.org" },
    });
    const missing = await call(app, "PUT", "/users/9", { json: { name: "X", email: "x@x.x" } });
    assert.equal(missing.status, 404);
    assert.deepEqual(await missing.json(), { success: false, message: "User not found" });
    const taken = await call(app, "PUT", "/users/1", {
      json: { name: "A", email: "bob@example.com" },
    });
    assert.equal(taken.status, 409);
    const invalid = await call(app, "PUT", "/users/1", {
      json: { name: "A", email: "not-an-email" },
    });
    assert.equal(invalid.status, 500);
    assert.deepEqual(await invalid.json(), {
      success: false,
      message: "Failed to update user: email must be an email address",
    });
  });

  it("DELETE /users/{id} deletes, or says not found", async () => {
    const app = await usersApp();
    await create(app, "Ada", "ada@example.com");
    const res = await call(app, "DELETE", "/users/1");
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { success: true, message: "User deleted successfully" });
    const again = await call(app, "DELETE", "/users/1");
    assert.equal(again.status, 404);
    assert.deepEqual(await again.json(), { success: false, message: "User not found" });
  });

  it("DELETE /users/{id} reports a failure of the service", async () => {
    const app = await usersApp();
    app.getBean(UserService).delete = () => {
      throw new Error("disk full");
    };
    const res = await call(app, "DELETE", "/users/1");
    assert.equal(res.status, 500);
    assert.deepEqual(await res.json(), {
      success: false,
      message: "Failed to delete user: disk full",
    });
  });

  it("GET /users/search finds by email; the literal beats /users/{id}", async () => {
    const app = await usersApp();
    await create(app, "Ada", "ada@example.com");
    const res = await call(app, "GET", "/users/search?email=ada%40example.com");
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), {
      success: true,
      data: { id: 1, name: "Ada", email: "ada@example.com" },
    });
    const missing = await call(app, "GET", "/users/search?email=zed@example.com");
    assert.equal(missing.status, 404);
    assert.deepEqual(await missing.json(), { success: false, message: "User not found" });
    const noParam = await call(app, "GET", "/users/search");
    assert.equal(noParam.status, 400);
    assert.equal((await noParam.json()).error, "Request parameter 'email' is required");
  });

  it("refuses bad input without losing data", async () => {
    const app = await usersApp();
    await create(app, "Ada", "ada@example.com");
    const json = { "content-type": "application/json" };
    assert.equal((await call(app, "POST", "/users", { body: "{", headers: json })).status, 400);
    assert.equal(
      (await call(app, "POST", "/users", {
        body: "name=x",
        headers: { "content-type": "text/plain" },
      })).status,
      415,
    );
    assert.equal(
      (await call(app, "POST", "/users", {
        body: JSON.stringify({ name: "x".repeat(2_000_000) }),
        headers: json,
      })).status,
      413,
    );
    const hostile = '{"name":"Eve","email":"eve@example.com","__proto__":{"isAdmin":true}}';
    const res = await call(app, "POST", "/users", { body: hostile, headers: json });
    assert.equal(res.status, 201);
    const created = (await res.json()).data;
    assert.deepEqual(created, { id: 2, name: "Eve", email: "eve@example.com" });
    assert.equal(({} as Record<string, unknown>).isAdmin, undefined);
    assert.equal((await call(app, "PATCH", "/users/1")).status, 405);
    assert.equal((await call(app, "GET", "/accounts")).status, 404);
    const list = await (await call(app, "GET", "/users")).json();
    assert.equal(list.data.length, 2);
  });
});
