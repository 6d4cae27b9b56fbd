// A real client of the sample app: the types openapi-typescript writes from the document the app
// serves, openapi-fetch over a real socket, every route called, and each answer checked against
// the schema the document declares for its status.
// integration test: needs openapi-typescript in tools/openapi-typescript (`npm test` installs it).
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import type { OpenApiDocument } from "../../openapi.ts";
import { listen, type Server } from "../../server.ts";
import { usersClient } from "../../examples/users/client/users_client.ts";
import { resolvePointer, schemaValidator } from "../openapi/openapi_validator.ts";
import { adminToken, STORAGES, usersApps } from "./users_storage.ts";
import { tempDir } from "../temp_dir.ts";

const root = fileURLToPath(new URL("../../", import.meta.url));
const GENERATOR = join(root, "tools/openapi-typescript/node_modules/openapi-typescript/bin/cli.js");
const COMMITTED = join(root, "examples/users/client/users_api.ts");

/** Runs openapi-typescript (under Node: it needs TypeScript 5's compiler API) on a document. */
async function generate(document: string): Promise<string> {
  assert.ok(
    existsSync(GENERATOR),
    `openapi-typescript is not installed: npm ci --prefix tools/openapi-typescript (npm test does)`,
  );
  await using dir = await tempDir("thaw-client-");
  await writeFile(join(dir.path, "openapi.json"), document);
  await promisify(execFile)("node", [GENERATOR, "openapi.json", "-o", "users_api.ts"], {
    cwd: dir.path,
  });
  return await readFile(join(dir.path, "users_api.ts"), "utf8");
}

const open = usersApps();

for (const storage of STORAGES) {
  describe(`a typed client of the users app (${storage})`, () => {
    let server: Server;
    let document: OpenApiDocument;
    let check: ReturnType<typeof schemaValidator>;
    const called = new Set<string>();

    before(async () => {
      const { unauthenticated } = await open(storage);
      server = await listen(unauthenticated, { port: 0, hostname: "127.0.0.1" });
      document = await (await fetch(`${server.url}/openapi.json`)).json();
      check = schemaValidator(document);
    });
    after(() => server?.close());

    /** Checks an answer against the schema its operation declares for its status. */
    function conforms(path: string, method: string, response: Response, body: unknown): void {
      const operation = document.paths[path]?.[method] as Record<string, unknown> | undefined;
      assert.ok(operation, `${method} ${path} is not in the document`);
      called.add(`${method} ${path}`);
      let declared = (operation.responses as Record<string, Record<string, unknown>>)[
        String(response.status)
      ];
      assert.ok(
        declared,
        `${method} ${path} answered ${response.status}, which it does not declare`,
      );
      if (typeof declared.$ref === "string") {
        declared = resolvePointer(document, declared.$ref) as Record<string, unknown>;
      }
      const content = declared.content as Record<string, { schema: unknown }> | undefined;
      const type = response.headers.get("content-type")?.split(";")[0] ?? "";
      assert.ok(content?.[type], `${method} ${path} ${response.status}: no schema for ${type}`);
      const result = check(content[type].schema, body);
      assert.ok(
        result.valid,
        `${method} ${path} ${response.status}: ${JSON.stringify(result.errors)}`,
      );
    }

    it("is generated from the served document exactly as committed", async () => {
      const served = await (await fetch(`${server.url}/openapi.json`)).text();
      const generated = await generate(served);
      assert.equal(
        generated,
        await readFile(COMMITTED, "utf8"),
        "examples/users/client/users_api.ts is stale: regenerate it (see users_client.ts)",
      );
    });

    it("calls every route, and every answer matches its declared schema", async () => {
      const users = usersClient(server.url, await adminToken());
      const ada = { name: "Ada", email: "ada@example.com" };

      const empty = await users.GET("/users");
      conforms("/users", "get", empty.response, empty.data);
      assert.deepEqual(empty.data?.data, []);

      const created = await users.POST("/users", { body: ada });
      conforms("/users", "post", created.response, created.data);
      assert.equal(created.response.status, 201);
      const id = created.data!.data.id;
      assert.equal(created.response.headers.get("location"), `/users/${id}`);

      const taken = await users.POST("/users", { body: { name: "Other", email: ada.email } });
      conforms("/users", "post", taken.response, taken.error);
      assert.equal(taken.response.status, 409);
      // The error is typed as a union of the declared bodies: the 409's or the error body.
      assert.deepEqual(taken.error, { success: false, message: "Email already exists" });

      // A body the schema refuses: the default error body, its issues naming the field.
      const bad = await users.POST("/users", {
        // @ts-expect-error: the generated types know name is a string
        body: { name: 1, email: "x@example.com" },
      });
      conforms("/users", "post", bad.response, bad.error);
      assert.equal(bad.response.status, 400);
      assert.deepEqual(
        (bad.error as { issues: { path: string[] }[] }).issues.map((i) => i.path),
        [["name"]],
      );

      const found = await users.GET("/users/{id}", { params: { path: { id } } });
      conforms("/users/{id}", "get", found.response, found.data);
      assert.deepEqual(found.data?.data, { id, ...ada });

      const missing = await users.GET("/users/{id}", { params: { path: { id: id + 100 } } });
      conforms("/users/{id}", "get", missing.response, missing.error);
      assert.equal(missing.response.status, 404);

      const byEmail = await users.GET("/users/search", {
        params: { query: { email: ada.email } },
      });
      conforms("/users/search", "get", byEmail.response, byEmail.data);
      assert.equal(byEmail.data?.data.id, id);
      const noEmail = await users.GET("/users/search", {
        params: { query: { email: "nobody@example.com" } },
      });
      conforms("/users/search", "get", noEmail.response, noEmail.error);

      const updated = await users.PUT("/users/{id}", {
        params: { path: { id } },
        body: { name: "Ada L.", email: ada.email },
      });
      conforms("/users/{id}", "put", updated.response, updated.data);
      assert.equal(updated.data?.data.name, "Ada L.");
      const updateMissing = await users.PUT("/users/{id}", {
        params: { path: { id: id + 100 } },
        body: ada,
      });
      conforms("/users/{id}", "put", updateMissing.response, updateMissing.error);

      // A path variable that is not an integer: the shared 400.
      const notNumber = await fetch(`${server.url}/users/abc`, {
        headers: { authorization: `Bearer ${await adminToken()}` },
      });
      conforms("/users/{id}", "get", notNumber, await notNumber.json());
      assert.equal(notNumber.status, 400);

      const deleted = await users.DELETE("/users/{id}", { params: { path: { id } } });
      conforms("/users/{id}", "delete", deleted.response, deleted.data);
      const deletedAgain = await users.DELETE("/users/{id}", { params: { path: { id } } });
      conforms("/users/{id}", "delete", deletedAgain.response, deletedAgain.error);
      assert.equal(deletedAgain.response.status, 404);

      // application.yml serves health: its three paths are in the document, typed like the rest.
      const paths = [
        "/actuator/health",
        "/actuator/health/liveness",
        "/actuator/health/readiness",
      ] as const;
      for (const path of paths) {
        const health = await users.GET(path);
        conforms(path, "get", health.response, health.data);
        assert.deepEqual(health.data, { status: "UP" });
      }

      const operations = Object.entries(document.paths).flatMap(([path, methods]) =>
        Object.keys(methods).map((method) => `${method} ${path}`)
      );
      assert.deepEqual([...called].sort(), operations.sort(), "a route was not called");
    });
  });
}
