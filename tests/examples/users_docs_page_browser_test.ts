// The sample users app's own docs page in headless Chromium, the app started as `npm start` starts
// it (its dev profile, a real port) and the token made by `npm run token`: what a person reading
// docs/sample-app.md does. Node 20 has no node:sqlite, so there the app runs on PostgreSQL (its
// `postgres` profile), as that page says.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import type { HTTPRequest } from "puppeteer-core";
import { authorize, launchChromium, STEP_TIMEOUT_MS, tryOperation } from "../../tools/chromium.ts";
import { freePort } from "../migrate/search/servers.ts";
import { SQLITE } from "../sqlite.ts";
import { tempDir } from "../temp_dir.ts";
import { start, tokenFromTool } from "./users_main.ts";
import { freshPostgres } from "./users_postgres.ts";

describe("the sample users app's docs page in a real browser (npm start, headless Chromium)", () => {
  it("shows Authorize and the bearer scheme; a read answers 401, then 200 with npm run token's token", async () => {
    await using cwd = await tempDir("thaw-users-docs-");
    const env = SQLITE === undefined ? await freshPostgres() : {};
    const app = await start(cwd.path, await freePort(), env);
    let chromium: Awaited<ReturnType<typeof launchChromium>> | undefined;
    try {
      // One user, stored as docs/sample-app.md's curl line stores it, with the tool's token.
      const token = await tokenFromTool();
      const stored = await fetch(`${app.url}/users`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
        body: JSON.stringify({ name: "Ada", email: "ada@example.com" }),
      });
      assert.equal(stored.status, 201, await stored.text());

      chromium = await launchChromium();
      const page = await chromium.browser.newPage();
      page.setDefaultTimeout(STEP_TIMEOUT_MS);
      const pageErrors: string[] = [];
      const sent: { method: string; authorization?: string }[] = [];
      page.on("pageerror", (error: unknown) => void pageErrors.push(String(error)));
      page.on("request", (request: HTTPRequest) => {
        if (new URL(request.url()).pathname === "/users") {
          sent.push({
            method: request.method(),
            authorization: request.headers()["authorization"],
          });
        }
      });
      // No token: the page and its document are open to anyone (permit-all of application.yml).
      const response = await page.goto(`${app.url}/docs`, {
        waitUntil: "networkidle0",
        timeout: STEP_TIMEOUT_MS,
      });
      assert.equal(response?.status(), 200);

      // The Authorize button, and the lock Swagger UI puts on an operation with a requirement.
      await page.waitForSelector(".auth-wrapper button.authorize");
      await page.waitForSelector(".opblock-get .authorization__btn");
      // The dialog names the scheme the document declares.
      await (await page.waitForSelector(".auth-wrapper button.authorize"))!.click();
      const scheme = await (await page.waitForSelector(".modal-ux-content h4"))!
        .evaluate((el) => el.textContent ?? "");
      assert.match(scheme, /^bearerAuth\s+\(http, Bearer\)/);
      await page.waitForSelector("#auth-bearer-value");
      await (await page.waitForSelector(".auth-btn-wrapper button.btn-done"))!.click();
      await page.waitForSelector(".modal-ux", { hidden: true });

      // Without a token, refused, with the 401 the document lists.
      const refused = await tryOperation(page, "post", "/users", {
        name: "Grace Hopper",
        email: "grace@example.com",
      });
      assert.equal(refused.status, 401, `status shown: ${refused.status}, body: ${refused.body}`);
      assert.equal(refused.undocumented, false, "Swagger UI finds the 401 in the document");

      // With `npm run token`'s token, entered in the dialog: the read answers 200.
      await authorize(page, token);
      const listed = await tryOperation(page, "get", "/users");
      assert.equal(listed.status, 200, `status shown: ${listed.status}, body: ${listed.body}`);
      assert.equal(listed.undocumented, false, "Swagger UI finds the 200 in the document");
      assert.deepEqual(JSON.parse(listed.body), {
        success: true,
        data: [{ id: 1, name: "Ada", email: "ada@example.com" }],
      });
      assert.deepEqual(sent, [
        { method: "POST", authorization: undefined },
        { method: "GET", authorization: `Bearer ${token}` },
      ]);
      assert.deepEqual(pageErrors, [], "page errors");
    } finally {
      try {
        await chromium?.close();
      } finally {
        await app.stop();
      }
    }
  });
});
