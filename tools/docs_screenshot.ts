/**
 * The README's picture of the docs page: serves the sample users app (on a fresh SQLite database,
 * migrated as main.ts migrates it) with two users, opens its `/docs` page in headless Chromium,
 * runs `GET /users` from the page, and writes a 1280-wide screenshot of the page down to the last
 * operation, to `docs/images/docs-page.png`:
 *
 * ```sh
 * node_modules/.bin/deno run -A tools/docs_screenshot.ts
 * ```
 *
 * Needs Chromium: `tools/system_packages.sh` installs Debian's, or set `CHROMIUM_PATH`.
 *
 * @module
 */
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { bootstrap } from "../mod.ts";
import { loadConfig } from "../config.ts";
import { openApi } from "../openapi.ts";
import { scanComponents } from "../scan.ts";
import { listen } from "../server.ts";
import { data } from "../data.ts";
import { actuator } from "../actuator.ts";
import { security } from "../security.ts";
import { devToken } from "../examples/users/dev/dev_token.ts";
import { SqlLocks } from "../examples/users/storage/sql_locks.ts";
import { SqlUserRepository } from "../examples/users/storage/sql_user_repository.ts";
import { usersMigrations } from "../examples/users/storage/users_migrations.ts";
import { launchChromium, STEP_TIMEOUT_MS, tryOperation } from "./chromium.ts";

const WIDTH = 1280;
const users = new URL("../examples/users/", import.meta.url);
const out = new URL("../docs/images/docs-page.png", import.meta.url);

const dir = await mkdtemp(join(tmpdir(), "thaw-docs-screenshot-"));
try {
  const env = { USERS_DB: join(dir, "users.db") };
  const config = await loadConfig(new URL("application.yml", users), { env });
  const app = await bootstrap({
    config,
    data: data({ migrate: usersMigrations(config) }),
    components: [...await scanComponents(config), SqlUserRepository, SqlLocks],
    openapi: openApi(),
    actuator: actuator(),
    security: security(),
  });
  // Its routes need a bearer token: a dev one, on every request here and from the page.
  const authorization = `Bearer ${await devToken({
    scopes: ["users:read", "users:write"],
  })}`;
  const server = await listen(app, { port: 0, hostname: "127.0.0.1" });
  try {
    for (
      const user of [
        { name: "Ada Lovelace", email: "ada@example.com" },
        { name: "Grace Hopper", email: "grace@example.com" },
      ]
    ) {
      const res = await fetch(`${server.url}/users`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization },
        body: JSON.stringify(user),
      });
      if (res.status !== 201) throw new Error(`POST /users: ${res.status} ${await res.text()}`);
      await res.body?.cancel();
    }
    const chromium = await launchChromium({ width: WIDTH, height: 900 });
    try {
      const page = await chromium.browser.newPage();
      page.setDefaultTimeout(STEP_TIMEOUT_MS);
      await page.setExtraHTTPHeaders({ authorization });
      const opened = await page.goto(`${server.url}/docs`, { waitUntil: "networkidle0" });
      if (opened?.status() !== 200) throw new Error(`GET /docs: ${opened?.status()}`);
      const shown = await tryOperation(page, "get", "/users");
      if (shown.status !== 200) throw new Error(`GET /users from the page: ${shown.status}`);
      // The page from its top down to the last operation: every operation, one of them run.
      const blocks = await page.$$(".opblock");
      const box = (await blocks[blocks.length - 1].boundingBox())!;
      const scrollY = await page.evaluate(() => globalThis.scrollY);
      await mkdir(new URL(".", out), { recursive: true });
      await page.screenshot({
        path: fileURLToPath(out),
        clip: { x: 0, y: 0, width: WIDTH, height: Math.ceil(scrollY + box.y + box.height + 12) },
        captureBeyondViewport: true,
      });
      console.log(`wrote ${fileURLToPath(out)}`);
    } finally {
      await chromium.close();
    }
  } finally {
    await server.close();
    await app.close();
  }
} finally {
  await rm(dir, { recursive: true, force: true });
}
