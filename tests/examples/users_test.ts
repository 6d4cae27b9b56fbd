// The sample users app's routes on the storages that need no server (memory, and SQLite where the
// runtime has it; PostgreSQL's run is users_postgres_test.ts), and what does not depend on one.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Component, DuplicateBeanError } from "../../mod.ts";
import { openApiDocument } from "../../openapi.ts";
import { UserInput } from "../../examples/users/src/user.ts";
import { MemoryUserRepository } from "../../examples/users/storage/memory_user_repository.ts";
import { call } from "../helpers.ts";
import { schemaValidator } from "../openapi/openapi_validator.ts";
import { routeCases } from "./users_routes.ts";
import {
  adminToken,
  asCaller,
  bootstrapUsers,
  SQL_STORAGE,
  STORAGES,
  usersApps,
} from "./users_storage.ts";

for (const storage of STORAGES) {
  describe(`sample users app (seed 4.2), users in ${storage}`, () => {
    routeCases(storage, usersApps());
  });
}

describe("sample users app: storage and schema", () => {
  it("refuses both storages at once: one bean name, userRepository", async () => {
    await assert.rejects(
      bootstrapUsers({}, [MemoryUserRepository, ...SQL_STORAGE]),
      (error) => error instanceof DuplicateBeanError && /userRepository/.test(error.message),
    );
  });

  it("exports UserInput as a Standard Schema with a JSON Schema of the body", () => {
    const standard = UserInput["~standard"] as typeof UserInput["~standard"] & {
      jsonSchema?: { input(options: { target: string }): Record<string, unknown> };
    };
    assert.equal(standard.vendor, "zod");
    const schema = standard.jsonSchema!.input({ target: "draft-2020-12" });
    assert.equal(schema.title, "UserInput");
    assert.deepEqual(schema.required, ["name", "email"]);
    assert.deepEqual(Object.keys(schema.properties as object), ["name", "email"]);
  });
});

describe("sample users app: a storage that fails", () => {
  it("answers 500 with the failure text and the exception's message (seed 4.2), as its document declares", async () => {
    @Component("userRepository")
    class FullDisk extends MemoryUserRepository {
      override insert(): Promise<never> {
        return Promise.reject(new Error("disk full"));
      }
    }
    const unauthenticated = await bootstrapUsers({}, [FullDisk]);
    const app = asCaller(unauthenticated, await adminToken());
    const res = await call(app, "POST", "/users", {
      json: { name: "Ada", email: "ada@example.com" },
    });
    const body = await res.json();
    assert.equal(res.status, 500);
    assert.deepEqual(body, { success: false, message: "Failed to create user: disk full" });
    const doc = await openApiDocument(unauthenticated);
    const declared = (doc.paths["/users"].post.responses as Record<
      string,
      { content?: Record<string, { schema: unknown }> }
    >)["500"];
    const schema = declared.content?.["application/json"].schema;
    assert.ok(schema !== undefined, "the 500 has no body schema");
    assert.ok(schemaValidator(doc)(schema, body).valid, JSON.stringify(declared));
  });
});
