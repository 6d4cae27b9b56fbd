// The sample users app bundled by esbuild and served by real workerd (Cloudflare's runtime, from
// npm), once through the generated manifest and once through lists written by hand: every route
// of seed section 4.2 over HTTP.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { type ChildProcess, spawnSync } from "node:child_process";
import { stop } from "esbuild";
import { bundleWorkers } from "../../tools/bundle_worker.ts";
import { startWorkerd, until } from "./workerd.ts";
import { suiteTempDirs } from "../temp_dir.ts";
import { generateKeyPair, SignJWT } from "jose";
import { devToken } from "../../examples/users/dev/dev_token.ts";

describe("sample users app on workerd", () => {
  const urls: Record<string, string> = {};
  let child: ChildProcess | undefined;
  /** An admin's bearer token, of the dev key the workers trust. */
  let authorization = "";
  after(() => {
    child?.kill();
  });
  // Registered after workerd's stop, so that its folder goes after it.
  const suiteDir = suiteTempDirs();

  before(async () => {
    const config = await bundleWorkers(await suiteDir("thaw-workerd-"));
    await stop();
    const started = await startWorkerd(2, ([users, explicit]) => [
      "serve",
      config,
      "--socket-addr",
      `users=127.0.0.1:${users}`,
      "--socket-addr",
      `usersExplicit=127.0.0.1:${explicit}`,
    ], async ([users, explicit], child, output) => {
      await until(`http://127.0.0.1:${users}/users`, child, output);
      await until(`http://127.0.0.1:${explicit}/users`, child, output);
    });
    child = started.child;
    authorization = `Bearer ${await devToken({
      scopes: ["users:read", "users:write"],
      roles: ["ADMIN"],
    })}`;
    urls.manifest = `http://127.0.0.1:${started.ports[0]}`;
    urls.explicit = `http://127.0.0.1:${started.ports[1]}`;
  });

  it("manifest: serves /actuator/health, UP once the app has started", async () => {
    const response = await fetch(`${urls.manifest}/actuator/health`);
    assert.equal(response.status, 200);
    assert.equal(response.headers.get("cache-control"), "no-store");
    assert.deepEqual(await response.json(), { status: "UP" });
    const readiness = await fetch(`${urls.manifest}/actuator/health/readiness`);
    assert.deepEqual(await readiness.json(), { status: "UP" });
  });

  for (const variant of ["manifest", "explicit"]) {
    it(`answers every route of seed 4.2 (bean classes from the ${variant})`, async () => {
      const base = urls[variant];
      const send = async (method: string, path: string, body?: unknown) => {
        const res = await fetch(`${base}${path}`, {
          method,
          headers: body === undefined
            ? { authorization }
            : { "content-type": "application/json", authorization },
          body: body === undefined ? null : JSON.stringify(body),
        });
        return { status: res.status, headers: res.headers, body: await res.json() };
      };
      const ada = { name: "Ada", email: "ada@example.com" };

      const empty = await send("GET", "/users");
      assert.deepEqual([empty.status, empty.body], [200, { success: true, data: [] }]);
      const created = await send("POST", "/users", ada);
      assert.equal(created.status, 201);
      assert.equal(created.headers.get("location"), "/users/1");
      assert.deepEqual(created.body, {
        success: true,
        data: { id: 1, ...ada },
        message: "User created successfully",
      });
      const taken = await send("POST", "/users", { name: "Other", email: ada.email });
      assert.deepEqual([taken.status, taken.body], [409, {
        success: false,
        message: "Email already exists",
      }]);
      const found = await send("GET", "/users/1");
      assert.deepEqual([found.status, found.body], [200, {
        success: true,
        data: { id: 1, ...ada },
      }]);
      const missing = await send("GET", "/users/2");
      assert.deepEqual([missing.status, missing.body], [404, {
        success: false,
        message: "User not found",
      }]);
      assert.equal((await send("GET", "/users/abc")).status, 400);
      const search = await send("GET", "/users/search?email=ada%40example.com");
      assert.deepEqual([search.status, search.body], [200, {
        success: true,
        data: { id: 1, ...ada },
      }]);
      assert.equal((await send("GET", "/users/search?email=nobody%40example.com")).status, 404);
      const updated = await send("PUT", "/users/1", { id: 9, name: "Ada L.", email: ada.email });
      assert.equal(updated.status, 200);
      assert.deepEqual(updated.body.data, { id: 1, name: "Ada L.", email: ada.email });
      assert.equal((await send("PUT", "/users/7", ada)).status, 404);
      const list = await send("GET", "/users");
      assert.deepEqual(list.body, {
        success: true,
        data: [{ id: 1, name: "Ada L.", email: ada.email }],
      });
      const deleted = await send("DELETE", "/users/1");
      assert.deepEqual([deleted.status, deleted.body], [200, {
        success: true,
        message: "User deleted successfully",
      }]);
      assert.equal((await send("DELETE", "/users/1")).status, 404);
      // Bad input gets the same answers as on the other runtimes.
      const raw = (body: string, type = "application/json") =>
        fetch(`${base}/users`, {
          method: "POST",
          headers: { "content-type": type, authorization },
          body,
        });
      const malformed = await raw("{");
      assert.equal(malformed.status, 400);
      await malformed.body?.cancel();
      // The zod schema runs on workerd too (where eval is refused): its issues, nothing stored.
      const invalid = await raw('{"name":1}');
      assert.equal(invalid.status, 400);
      assert.deepEqual(
        (await invalid.json()).issues.map((i: { path: string[] }) => i.path),
        [["name"], ["email"]],
      );
      const wrongType = await raw("name=x", "text/plain");
      assert.equal(wrongType.status, 415);
      await wrongType.body?.cancel();
      const hostile = await raw(
        '{"name":"Eve","email":"eve@example.com","__proto__":{"isAdmin":true}}',
      );
      assert.equal(hostile.status, 201);
      assert.deepEqual((await hostile.json()).data, {
        id: 2,
        name: "Eve",
        email: "eve@example.com",
      });
      const wrongMethod = await fetch(`${base}/users/1`, {
        method: "PATCH",
        headers: { authorization },
      });
      assert.equal(wrongMethod.status, 405);
      assert.match(wrongMethod.headers.get("allow") ?? "", /GET/);
      await wrongMethod.body?.cancel();
    });
  }

  for (const variant of ["manifest", "explicit"]) {
    it(`checks the bearer token with security() (bean classes from the ${variant})`, async () => {
      const base = urls[variant];
      const get = async (token?: string) => {
        const res = await fetch(`${base}/users`, {
          headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
        });
        return { status: res.status, challenge: res.headers.get("www-authenticate"), res };
      };
      const reader = await devToken({ scopes: ["users:read"] });
      const ok = await get(reader);
      assert.equal(ok.status, 200);
      assert.equal((await ok.res.json()).success, true);
      const none = await get();
      assert.deepEqual([none.status, none.challenge], [401, "Bearer"]);
      await none.res.body?.cancel();
      const { privateKey } = await generateKeyPair("ES256");
      const forged = await new SignJWT({ scope: "users:read" })
        .setProtectedHeader({ alg: "ES256" })
        .setSubject("mallory")
        .setAudience("users")
        .setExpirationTime("5m")
        .sign(privateKey);
      const expired = await devToken({ scopes: ["users:read"], expiresIn: "-10m" });
      for (const token of [forged, expired, "not.a.token"]) {
        const refused = await get(token);
        assert.deepEqual([refused.status, refused.challenge], [
          401,
          'Bearer error="invalid_token"',
        ]);
        assert.deepEqual(await refused.res.json(), { error: "invalid_token" });
      }
      // The scope decides: a reader may not write, and nothing is stored.
      const write = await fetch(`${base}/users`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${reader}` },
        body: JSON.stringify({ name: "Eve", email: "eve@example.org" }),
      });
      assert.equal(write.status, 403);
      assert.equal(
        write.headers.get("www-authenticate"),
        'Bearer error="insufficient_scope", scope="users:write"',
      );
      await write.body?.cancel();
      const search = await fetch(`${base}/users/search?email=eve%40example.org`, {
        headers: { authorization: `Bearer ${reader}` },
      });
      assert.equal(search.status, 404);
      await search.body?.cancel();
    });
  }

  it("manifest: serves /actuator/prometheus, the request metrics by route template", async () => {
    // Requests this test made: the others' may have run before it.
    const count = async () => {
      const scrape = await fetch(`${urls.manifest}/actuator/prometheus`);
      assert.equal(scrape.status, 200);
      assert.equal(scrape.headers.get("content-type"), "text/plain; version=0.0.4; charset=utf-8");
      const text = await scrape.text();
      const line = new RegExp(
        '^http_server_request_duration_seconds_count\\{http_request_method="GET",' +
          'http_route="/users/\\{id\\}",http_response_status_code="404",[^}]*\\} (\\d+)$',
        "m",
      ).exec(text);
      return { text, value: line === null ? 0 : Number(line[1]) };
    };
    const earlier = await count();
    for (const id of [901, 902]) {
      const missing = await fetch(`${urls.manifest}/users/${id}`, { headers: { authorization } });
      assert.equal(missing.status, 404);
      await missing.body?.cancel();
    }
    const later = await count();
    assert.equal(later.value - earlier.value, 2);
    assert.doesNotMatch(later.text, /\/users\/90[12]/);
    const check = spawnSync("promtool", ["check", "metrics"], {
      input: later.text,
      encoding: "utf8",
    });
    assert.equal(check.error, undefined, "promtool must be installed (npm test installs it)");
    assert.equal(check.status, 0, `promtool: ${check.stdout}${check.stderr}`);
  });

  it("serves the OpenAPI document on workerd, without the docs page (worker.ts)", async () => {
    const document = await fetch(`${urls.manifest}/openapi.json`);
    assert.equal(document.status, 200);
    const body = await document.json();
    assert.equal(body.openapi, "3.1.0");
    assert.deepEqual(Object.keys(body.paths).sort(), [
      "/actuator/health",
      "/actuator/health/liveness",
      "/actuator/health/readiness",
      "/users",
      "/users/search",
      "/users/{id}",
    ]);
    // No route there: a caller is told so; an anonymous client learns nothing (security() on).
    const page = await fetch(`${urls.manifest}/docs`, { headers: { authorization } });
    assert.equal(page.status, 404);
    await page.body?.cancel();
    const anonymous = await fetch(`${urls.manifest}/docs`);
    assert.equal(anonymous.status, 401);
    await anonymous.body?.cancel();
    // worker_explicit.ts asks for neither.
    const none = await fetch(`${urls.explicit}/openapi.json`, { headers: { authorization } });
    assert.equal(none.status, 404);
    await none.body?.cancel();
  });
});
