import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { connect, type Socket } from "node:net";
import { mkdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { SQLITE } from "../sqlite.ts";
import { freePort } from "../migrate/search/servers.ts";
import { adminToken, STORAGES, usersApps } from "./users_storage.ts";
import { untilRefused } from "../runtime/raw_client.ts";
import { listen } from "../../server.ts";
import { tempDir } from "../temp_dir.ts";
import { runToEnd, start } from "./users_main.ts";

/** What a raw connection receives, and a way to wait for it. */
function received(socket: Socket) {
  let text = "";
  let closed = false;
  const waiting: (() => void)[] = [];
  const changed = () => waiting.splice(0).forEach((w) => w());
  socket.setEncoding("latin1").on("data", (chunk: string) => {
    text += chunk;
    changed();
  });
  socket.on("close", () => {
    closed = true;
    changed();
  });
  socket.on("error", () => {});
  const until = (done: () => boolean, what: string): Promise<string> =>
    new Promise((resolve, reject) => {
      const check = () => {
        if (done()) resolve(text);
        else if (closed) reject(new Error(`closed before ${what}; received:\n${text}`));
        else waiting.push(check);
      };
      check();
    });
  return {
    /** Resolves with everything received once it matches `pattern`. */
    match: (pattern: RegExp) => until(() => pattern.test(text), String(pattern)),
    /** Resolves with everything received once the server has closed the connection. */
    closed: () => until(() => closed, "the end"),
  };
}

/** The records of the migration runner in the default database under `cwd`, as stored. */
function recordRows(cwd: string): Record<string, unknown>[] {
  const db = new SQLITE!.DatabaseSync(join(cwd, "data", "users.db"), { readOnly: true });
  try {
    return db.prepare("SELECT * FROM framework_migrations ORDER BY id").all() as Record<
      string,
      unknown
    >[];
  } finally {
    db.close();
  }
}

/** The files the records say were applied, in order. */
function applied(cwd: string): string[] {
  return recordRows(cwd).map((row) => String(row.migration_path));
}

for (const storage of STORAGES) {
  describe(`sample users app on a real port, users in ${storage}`, () => {
    const open = usersApps();

    it("serves through listen(app) on a free port", async () => {
      const { unauthenticated } = await open(storage);
      const server = await listen(unauthenticated, { port: 0, hostname: "127.0.0.1" });
      const authorization = `Bearer ${await adminToken()}`;
      try {
        assert.ok(server.port > 0);
        const created = await fetch(`${server.url}/users`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization },
          body: JSON.stringify({ name: "Ada", email: "ada@example.com" }),
        });
        assert.equal(created.status, 201);
        await created.body?.cancel();
        const res = await fetch(`${server.url}/users/1`, { headers: { authorization } });
        assert.deepEqual(await res.json(), {
          success: true,
          data: { id: 1, name: "Ada", email: "ada@example.com" },
        });
        const invalid = await fetch(`${server.url}/users`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization },
          body: '{"name":1}',
        });
        assert.equal(invalid.status, 400);
        assert.equal((await invalid.json()).issues.length, 2);
      } finally {
        await server.close();
      }
    });
  });
}

describe("examples/users/main.ts as a process (npm start)", () => {
  if (SQLITE === undefined) {
    it("exits 1 with the runner's SQLite message, no stack trace, on a Node without node:sqlite", async () => {
      await using cwd = await tempDir("thaw-users-main-");
      const run = await runToEnd(cwd.path);
      assert.equal(run.code, 1, run.out + run.err);
      assert.equal(
        run.err.trim(),
        "users app not started: SQLite needs a runtime with node:sqlite: Deno, Bun, or Node " +
          "22.13 or later",
      );
      assert.doesNotMatch(run.out + run.err, /^\s+at /m);
      await assert.rejects(stat(join(cwd.path, "data")), "nothing was created");
    });
    return;
  }

  it("refuses USERS_DB=:memory:, which the migrations would reach and the app would not", async () => {
    await using cwd = await tempDir("thaw-users-main-");
    const { code, err } = await runToEnd(cwd.path, { USERS_DB: ":memory:" });
    assert.equal(code, 2, err);
    // data()'s refusal, naming the line of application.yml and the variable that set it.
    assert.match(
      err,
      /^users app not started: \S+application\.yml:\d+: datasource\[0\]\.url \(from environment variable USERS_DB\): data\(\{ migrate \}\) would migrate an in-memory database of its own, not the one datasource "users" gives the app: give a file/,
    );
    assert.doesNotMatch(err, /\n\s+at /, "no stack trace");
    await assert.rejects(stat(join(cwd.path, "data")), "nothing was created");
  });

  it("stops on a configuration it cannot read with one line and exit code 2, no stack trace", async () => {
    await using cwd = await tempDir("thaw-users-main-");
    // The postgres profile's password is ${USERS_DB_PASSWORD}, with no default.
    const { code, out, err } = await runToEnd(cwd.path, { THAW_PROFILES_ACTIVE: "postgres" });
    assert.equal(code, 2, out + err);
    assert.match(
      err,
      /^users app not started: \S+application-postgres\.yml:\d+: datasource\[0\]\.password uses \$\{USERS_DB_PASSWORD\}, which is not set/,
    );
    assert.equal(err.trim().split("\n").length, 1, err);
    assert.doesNotMatch(out, /Thaw listening/);
  });

  it("stops on a migration that fails with one line (the file, the database's reason) and the runner's exit code", async () => {
    await using cwd = await tempDir("thaw-users-main-");
    // A users table made by hand: 001-create-users.sql's CREATE TABLE meets it.
    await mkdir(join(cwd.path, "data"));
    const db = new SQLITE!.DatabaseSync(join(cwd.path, "data", "users.db"));
    db.exec("CREATE TABLE users (id INTEGER PRIMARY KEY)");
    db.close();
    const { code, out, err } = await runToEnd(cwd.path);
    assert.equal(code, 1, out + err);
    assert.match(
      err,
      /^users app not started: .*001-create-users\.sql.*table users already exists/,
    );
    assert.equal(err.trim().split("\n").length, 1, err);
    assert.doesNotMatch(out, /Thaw listening/);
  });

  it("migrates, then serves on the port application.yml gives; a restart skips the migration and keeps the users", async () => {
    await using cwd = await tempDir("thaw-users-main-");
    const port = await freePort();
    const first = await start(cwd.path, port);
    try {
      // Both files applied before it listened, as the runner's records and lines show.
      assert.deepEqual(applied(cwd.path), ["001-create-users.sql", "002-create-shedlock.sql"]);
      const listening = first.output.indexOf("Thaw listening");
      for (const file of ["001-create-users.sql", "002-create-shedlock.sql"]) {
        const line = first.output.search(new RegExp(`users \\[\\d/2\\] apply ${file}`));
        assert.ok(line >= 0 && line < listening, first.output);
      }
      assert.equal(first.port, port);
      assert.match(
        first.output,
        new RegExp(`Thaw listening on http://0\\.0\\.0\\.0:${port} \\(every IPv4 interface\\) — `),
      );
      // Secured by its dev profile: a dev token, as `npm run token` prints, gets through.
      const refused = await fetch(`${first.url}/users`);
      assert.equal(refused.status, 401);
      await refused.body?.cancel();
      const authorization = `Bearer ${await adminToken()}`;
      const res = await fetch(`${first.url}/users`, { headers: { authorization } });
      assert.equal(res.status, 200);
      assert.deepEqual(await res.json(), { success: true, data: [] });
      const created = await fetch(`${first.url}/users`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization },
        body: JSON.stringify({ name: "Ada", email: "ada@example.com" }),
      });
      assert.equal(created.status, 201);
      await created.body?.cancel();
      // The document and its docs page, on with the permissions of npm start.
      const document = await fetch(`${first.url}/openapi.json`);
      assert.equal((await document.json()).info.title, "Users");
      const page = await fetch(`${first.url}/docs/swagger-ui-bundle.js`);
      assert.equal(page.status, 200);
      await page.body?.cancel();
    } finally {
      await first.stop();
    }
    // The database is the default one, relative to the working directory.
    assert.ok((await stat(join(cwd.path, "data", "users.db"))).isFile());
    const records = recordRows(cwd.path);
    const second = await start(cwd.path, await freePort());
    try {
      // Nothing applied again: the records are the first start's, untouched.
      assert.deepEqual(recordRows(cwd.path), records);
      assert.doesNotMatch(second.output, /\] apply /);
      const authorization = `Bearer ${await adminToken()}`;
      assert.deepEqual(
        await (await fetch(`${second.url}/users/1`, { headers: { authorization } })).json(),
        {
          success: true,
          data: { id: 1, name: "Ada", email: "ada@example.com" },
        },
      );
    } finally {
      await second.stop();
    }
  });

  it("serves the health endpoints of application.yml, and SIGTERM stops it cleanly with exit code 0", async () => {
    await using cwd = await tempDir("thaw-users-main-");
    const app = await start(cwd.path, await freePort());
    let stopped = false;
    try {
      for (const path of ["", "/liveness", "/readiness"]) {
        const res = await fetch(`${app.url}/actuator/health${path}`);
        assert.equal(res.status, 200, path);
        assert.equal(await res.text(), '{"status":"UP"}', path);
      }
      // The fetches leave kept-alive connections idle: the shutdown closes them, not waits.
      stopped = true;
      // A clean shutdown prints its one line, the start line's pair, and nothing else.
      assert.match(
        await app.stop(),
        /^Thaw stopped listening on http:\/\/\S+(?: \([^)]*\))?, shut down in \d+ ms\n$/,
      );
    } finally {
      if (!stopped) await app.stop();
    }
    await assert.rejects(fetch(`${app.url}/actuator/health`), "nothing listens any more");
  });

  it("lets a POST in flight at SIGTERM finish (201, Connection: close), then exits 0", async () => {
    await using cwd = await tempDir("thaw-users-main-");
    const app = await start(cwd.path, await freePort());
    const socket = connect(app.port, "127.0.0.1");
    try {
      const answer = received(socket);
      const body = JSON.stringify({ name: "Ada", email: "ada@example.com" });
      socket.write(
        "POST /users HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n" +
          `Authorization: Bearer ${await adminToken()}\r\n` +
          `Content-Length: ${body.length}\r\nExpect: 100-continue\r\n\r\n`,
      );
      // Asked for its body, the request is the server's: in flight when the signal comes.
      await answer.match(/^HTTP\/1\.1 100 Continue\r\n\r\n/);
      app.terminate();
      // Stopped accepting: the shutdown has begun, with the request still waiting for its body.
      await untilRefused(app.port);
      socket.write(body);
      const text = await answer.closed();
      assert.match(text, /\r\n\r\nHTTP\/1\.1 201 Created\r\n/, text);
      assert.match(text, /\r\nconnection: close\r\n/i, text);
      assert.match(text, /"data":\{"id":1,"name":"Ada","email":"ada@example\.com"\}/, text);
      assert.deepEqual(await app.ended, { code: 0, signal: null }, app.output);
    } finally {
      socket.destroy();
      app.terminate();
      await app.ended;
    }
  });
});
