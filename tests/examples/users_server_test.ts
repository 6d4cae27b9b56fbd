import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { bootstrap } from "../../mod.ts";
import { scriptCommand } from "../runtime.ts";

const root = fileURLToPath(new URL("../../", import.meta.url));

describe("sample users app on a real port", () => {
  it("serves through app.listen on a free port", async () => {
    const app = await bootstrap({
      config: new URL("../../examples/users/application.yml", import.meta.url),
      env: {},
    });
    const server = await app.listen({ port: 0, hostname: "127.0.0.1" });
    try {
      assert.ok(server.port > 0);
      const created = await fetch(`${server.url}/users`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ name: "Ada", email: "ada@example.com" }),
      });
      assert.equal(created.status, 201);
      await created.body?.cancel();
      const res = await fetch(`${server.url}/users/1`);
      assert.deepEqual(await res.json(), {
        success: true,
        data: { id: 1, name: "Ada", email: "ada@example.com" },
      });
    } finally {
      await server.close();
    }
  });

  it("starts examples/users/main.ts as a process, on the port application.yml gives", async () => {
    const port = 20000 + Math.floor(Math.random() * 20000);
    const child = spawn(
      // On Deno, with exactly the permissions the README's `npm start` grants.
      ...scriptCommand("examples/users/main.ts", [], [
        "--allow-net",
        "--allow-read",
        "--allow-env=PORT",
      ]),
      {
        cwd: root,
        env: { ...process.env, PORT: String(port), NO_COLOR: "1" },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = "";
        const timer = setTimeout(() => reject(new Error(`no start within 20 s: ${out}`)), 20_000);
        const read = (chunk: Buffer) => {
          out += chunk.toString();
          const match = /listening on (http:\/\/\S+)/.exec(out);
          if (match) {
            clearTimeout(timer);
            resolve(match[1]);
          }
        };
        child.stdout.on("data", read);
        child.stderr.on("data", read);
        child.on("exit", (code) => reject(new Error(`exited with ${code}: ${out}`)));
      });
      assert.equal(url, `http://localhost:${port}`);
      const res = await fetch(`${url}/users`);
      assert.equal(res.status, 200);
      assert.deepEqual(await res.json(), { success: true, data: [] });
    } finally {
      child.kill("SIGTERM");
      await new Promise((resolve) => child.once("close", resolve));
    }
  });
});
