// The route cases of the sample users app (seed 4.2) for one storage, declared in the suite that
// calls them: users_test.ts runs them on memory and SQLite, users_postgres_test.ts on PostgreSQL.
import { it } from "node:test";
import assert from "node:assert/strict";
import type { Application } from "../../mod.ts";
import { DuplicateEmailError, UserRepository } from "../../examples/users/src/user_repository.ts";
import { UserService } from "../../examples/users/src/user_service.ts";
import { call } from "../helpers.ts";
import type { Storage, UsersApps } from "./users_storage.ts";

async function create(app: Application, name: unknown, email: unknown) {
  const res = await call(app, "POST", "/users", { json: { name, email } });
  return { res, body: await res.json() };
}

async function emails(app: Application): Promise<string[]> {
  const list = await (await call(app, "GET", "/users")).json();
  return list.data.map((u: { email: string }) => u.email);
}

/** The default error body of a 400 the `UserInput` schema caused, with its issues' paths. */
async function refused(res: Response): Promise<string[]> {
  const body = await res.json();
  assert.equal(res.status, 400, JSON.stringify(body));
  assert.equal(body.status, 400);
  assert.equal(body.error, "Request body failed validation");
  assert.ok(Array.isArray(body.issues) && body.issues.length > 0, JSON.stringify(body));
  for (const issue of body.issues) assert.equal(typeof issue.message, "string");
  return body.issues.map((i: { path: unknown[] }) => i.path.join("."));
}

/** Declares every route case on apps of `storage`, each made fresh by `open`. */
export function routeCases(storage: Storage, open: UsersApps): void {
  // A fresh app, and with SQL a fresh database (a file, or a database of the server), per test.
  const usersApp = async () => (await open(storage)).app;

  it("GET /users lists users", async () => {
    const app = await usersApp();
    assert.deepEqual(await (await call(app, "GET", "/users")).json(), {
      success: true,
      data: [],
    });
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
    assert.deepEqual(await emails(app), ["ada@example.com"]);
  });

  it('POST /users refuses {"name":1} and an empty name with 400 and the issues, storing nothing', async () => {
    const app = await usersApp();
    const res = await call(app, "POST", "/users", { json: { name: 1 } });
    assert.deepEqual(await refused(res), ["name", "email"]);
    const empty = await create(app, "   ", "nobody@example.com");
    assert.equal(empty.res.status, 400);
    assert.deepEqual(empty.body.issues.map((i: { path: string[] }) => i.path), [["name"]]);
    assert.deepEqual(await emails(app), []);
    // The name is trimmed; an id in the body is not the client's to choose.
    const trimmed = await call(app, "POST", "/users", {
      json: { id: 41, name: "  Ada ", email: "ada@example.com" },
    });
    assert.equal(trimmed.status, 201);
    assert.deepEqual((await trimmed.json()).data, {
      id: 1,
      name: "Ada",
      email: "ada@example.com",
    });
  });

  it("refuses wrong types, missing fields, oversized strings and fields only in __proto__ with 400, storing nothing", async () => {
    const app = await usersApp();
    await create(app, "Ada", "ada@example.com");
    const json = { "content-type": "application/json" };
    const bodies: [string, string[]][] = [
      ["{}", ["name", "email"]],
      ["[]", [""]],
      ["null", [""]],
      ['"Eve"', [""]],
      ['{"name":"Eve"}', ["email"]],
      ['{"email":"eve@example.com"}', ["name"]],
      ['{"name":["Eve"],"email":"eve@example.com"}', ["name"]],
      ['{"name":"Eve","email":true}', ["email"]],
      ['{"name":"Eve","email":"not-an-email"}', ["email"]],
      [JSON.stringify({ name: "E".repeat(101), email: "eve@example.com" }), ["name"]],
      [JSON.stringify({ name: "Eve", email: `${"e".repeat(250)}@example.com` }), ["email"]],
      // Thaw drops `__proto__` keys, so fields inherited through one are not there.
      ['{"__proto__":{"name":"Eve","email":"eve@example.com"}}', ["name", "email"]],
    ];
    for (const [body, paths] of bodies) {
      const res = await call(app, "POST", "/users", { body, headers: json });
      assert.deepEqual(await refused(res), paths, body);
      const put = await call(app, "PUT", "/users/1", { body, headers: json });
      assert.deepEqual(await refused(put), paths, body);
    }
    assert.deepEqual(await (await call(app, "GET", "/users")).json(), {
      success: true,
      data: [{ id: 1, name: "Ada", email: "ada@example.com" }],
    });
    assert.equal(({} as Record<string, unknown>).name, undefined);
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
    const missing = await call(app, "PUT", "/users/9", {
      json: { name: "X", email: "x@example.com" },
    });
    assert.equal(missing.status, 404);
    assert.deepEqual(await missing.json(), { success: false, message: "User not found" });
    const taken = await call(app, "PUT", "/users/1", {
      json: { name: "A", email: "bob@example.com" },
    });
    assert.equal(taken.status, 409);
    assert.deepEqual(await taken.json(), { success: false, message: "Email already exists" });
    // Its own email is not taken.
    const same = await call(app, "PUT", "/users/2", {
      json: { name: "Robert", email: "bob@example.com" },
    });
    assert.equal(same.status, 200);
    const invalid = await call(app, "PUT", "/users/1", {
      json: { name: "A", email: "not-an-email" },
    });
    assert.deepEqual(await refused(invalid), ["email"]);
    assert.deepEqual(await (await call(app, "GET", "/users")).json(), {
      success: true,
      data: [
        { id: 1, name: "Ada L.", email: "ada@l.org" },
        { id: 2, name: "Robert", email: "bob@example.com" },
      ],
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
    // Ids are not reused.
    assert.equal((await create(app, "Bob", "bob@example.com")).body.data.id, 2);
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
    assert.deepEqual(await emails(app), ["ada@example.com", "eve@example.com"]);
  });

  it("lets one of two requests racing for an email win, and refuses the other (409)", async () => {
    const app = await usersApp();
    const post = (name: string) =>
      call(app, "POST", "/users", { json: { name, email: "ada@example.com" } });
    const statuses = (await Promise.all([post("Ada"), post("Ada 2")])).map((r) => r.status);
    assert.deepEqual(statuses.sort(), [201, 409]);
    // Below the service, the storage alone: the unique index decides, not a read before.
    const repository = app.getBean(UserRepository);
    const inserts = await Promise.allSettled([
      repository.insert({ name: "Bob", email: "bob@example.com" }),
      repository.insert({ name: "Bob 2", email: "bob@example.com" }),
    ]);
    assert.deepEqual(inserts.map((r) => r.status).sort(), ["fulfilled", "rejected"]);
    const refused = inserts.find((r) => r.status === "rejected") as PromiseRejectedResult;
    assert.ok(refused.reason instanceof DuplicateEmailError, String(refused.reason));
    // A name that is the index's or the column's: the database's message, values masked, no
    // longer names them; the refusal is told by its code.
    for (const name of ["users.email", "users_email"]) {
      await assert.rejects(
        repository.insert({ name, email: "bob@example.com" }),
        DuplicateEmailError,
      );
    }
    const bob = (await repository.findByEmail("bob@example.com"))!;
    const updates = await Promise.allSettled([
      repository.update(bob.id, { name: "Ada?", email: "carl@example.com" }),
      repository.insert({ name: "Carl", email: "carl@example.com" }),
    ]);
    assert.deepEqual(updates.map((r) => r.status).sort(), ["fulfilled", "rejected"]);
    assert.ok(
      updates.some((r) => r.status === "rejected" && r.reason instanceof DuplicateEmailError),
    );
    // The update won (Bob is Carl now), or the insert did (Bob kept his email).
    assert.deepEqual(
      (await emails(app)).sort(),
      updates[0].status === "fulfilled"
        ? ["ada@example.com", "carl@example.com"]
        : ["ada@example.com", "bob@example.com", "carl@example.com"],
    );
  });

  if (storage !== "memory") {
    it("keeps the users across a restart on the same database", async () => {
      const first = await open(storage);
      await create(first.app, "Ada", "ada@example.com");
      await create(first.app, "Bob", "bob@example.com");
      await call(first.app, "DELETE", "/users/2");
      await first.close();
      // The migrations skip the applied files; the data and the id sequence are the database's.
      const second = await open(storage, first.env);
      assert.deepEqual(await (await call(second.app, "GET", "/users/1")).json(), {
        success: true,
        data: { id: 1, name: "Ada", email: "ada@example.com" },
      });
      assert.equal((await create(second.app, "Ada 2", "ada@example.com")).res.status, 409);
      const carl = await create(second.app, "Carl", "carl@example.com");
      // Never an id given before. PostgreSQL's sequence spent 3 on the refused insert: a
      // sequence is not rolled back, where SQLite takes the next id at the insert that lands.
      const next = storage === "postgres" ? 4 : 3;
      assert.equal(carl.res.headers.get("location"), `/users/${next}`);
    });
  }
}
