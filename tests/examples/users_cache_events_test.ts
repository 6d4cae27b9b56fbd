// The sample app's cached lookup and its event: a user read by id comes from the cache until the
// API changes or deletes it, and a new user is welcomed without the request waiting for it.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { UserRepository } from "../../examples/users/src/user_repository.ts";
import { WelcomeMailer } from "../../examples/users/src/welcome_mailer.ts";
import { call } from "../helpers.ts";
import { STORAGES, usersApps } from "./users_storage.ts";

for (const storage of STORAGES) {
  describe(`sample users app, cache and events, users in ${storage}`, () => {
    const open = usersApps();

    it("reads a user from the cache until the API changes or deletes it", async () => {
      const { app } = await open(storage);
      const repository = app.getBean(UserRepository);
      const reads: number[] = [];
      const findById = repository.findById.bind(repository);
      repository.findById = (id) => {
        reads.push(id);
        return findById(id);
      };
      const created = await (await call(app, "POST", "/users", {
        json: { name: "Ada", email: "ada@example.com" },
      })).json();
      const id = created.data.id;

      const first = await (await call(app, "GET", `/users/${id}`)).json();
      const second = await (await call(app, "GET", `/users/${id}`)).json();
      assert.deepEqual(second, first);
      assert.deepEqual(reads, [id]);

      const put = await call(app, "PUT", `/users/${id}`, {
        json: { name: "Ada L.", email: "ada@example.com" },
      });
      assert.equal(put.status, 200);
      const updated = await (await call(app, "GET", `/users/${id}`)).json();
      assert.equal(updated.data.name, "Ada L.");
      assert.deepEqual(reads, [id]); // the update put the new user in the cache

      assert.equal((await call(app, "DELETE", `/users/${id}`)).status, 200);
      assert.equal((await call(app, "GET", `/users/${id}`)).status, 404);
      assert.equal((await call(app, "GET", `/users/${id}`)).status, 404);
      assert.deepEqual(reads, [id, id, id]); // evicted, and "not found" is not cached
    });

    it("welcomes a new user without holding the request up, and not a refused one", async () => {
      const { app } = await open(storage);
      const mailer = app.getBean(WelcomeMailer);
      const res = await call(app, "POST", "/users", { json: { name: "Bo", email: "bo@x.org" } });
      assert.equal(res.status, 201);
      while (mailer.queued === 0) await new Promise((resolve) => setTimeout(resolve, 1));
      assert.equal(mailer.queued, 1);
      const taken = await call(app, "POST", "/users", { json: { name: "Bo", email: "bo@x.org" } });
      assert.equal(taken.status, 409);
      await app.close(); // waits for async listeners still running
      assert.equal(mailer.queued, 1);
    });
  });
}
