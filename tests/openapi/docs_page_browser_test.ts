import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdir } from "node:fs/promises";
import process from "node:process";
import { fileURLToPath } from "node:url";
import type { ConsoleMessage, HTTPRequest } from "puppeteer-core";
import { launchChromium, STEP_TIMEOUT_MS, tryOperation } from "../../tools/chromium.ts";
import { listen } from "../../server.ts";
import { RUNTIME } from "../runtime.ts";
import { type Storage, STORAGES, usersApps } from "../examples/users_storage.ts";

const output = new URL("../output/", import.meta.url);
const runtimeName = RUNTIME === "node" ? `node${process.versions.node.split(".")[0]}` : RUNTIME;

/**
 * The sample users app served on a free port of this runtime, as
 * tests/examples/users_server_test.ts serves it: on a fresh migrated SQLite database (what main.ts
 * runs) where the runtime has node:sqlite, else in memory (Node 20).
 */
async function serveUsersApp(
  open: ReturnType<typeof usersApps>,
): Promise<{ url: string; storage: Storage; close(): Promise<void> }> {
  const storage = STORAGES.at(-1)!;
  const users = await open(storage);
  const server = await listen(users.app, { port: 0, hostname: "127.0.0.1" });
  return {
    url: server.url,
    storage,
    close: async () => {
      try {
        await server.close();
      } finally {
        users.close();
      }
    },
  };
}

const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];

/** `METHOD /path` of every operation of an OpenAPI document, sorted. */
function documentedOperations(document: { paths?: Record<string, Record<string, unknown>> }) {
  return Object.entries(document.paths ?? {})
    .flatMap(([path, item]) =>
      Object.keys(item).filter((key) => METHODS.includes(key)).map((method) =>
        `${method.toUpperCase()} ${path}`
      )
    )
    .sort();
}

describe("the docs page in a real browser (headless Chromium)", () => {
  const open = usersApps();

  it("shows every operation, runs one from the page, and stays on the app's origin", async () => {
    const app = await serveUsersApp(open);
    let chromium: Awaited<ReturnType<typeof launchChromium>> | undefined;
    try {
      const origin = new URL(app.url).origin;
      const served = await fetch(`${app.url}/openapi.json`);
      assert.equal(served.status, 200, "examples/users/application.yml sets app.openapi");
      const openapi = await served.json();
      const expected = documentedOperations(openapi);
      assert.ok(
        expected.includes("POST /users"),
        `the sample app documents POST /users: ${expected}`,
      );

      chromium = await launchChromium();
      const page = await chromium.browser.newPage();
      page.setDefaultTimeout(STEP_TIMEOUT_MS);
      const requests: string[] = [];
      const consoleErrors: string[] = [];
      const pageErrors: string[] = [];
      const failedRequests: string[] = [];
      page.on("request", (request: HTTPRequest) => void requests.push(request.url()));
      page.on(
        "requestfailed",
        (request: HTTPRequest) =>
          void failedRequests.push(`${request.url()}: ${request.failure()?.errorText}`),
      );
      page.on("console", (message: ConsoleMessage) => {
        if (message.type() === "error" || /Content.Security.Policy/i.test(message.text())) {
          consoleErrors.push(
            `${message.type()}: ${message.text()} (${message.location().url ?? "the page"})`,
          );
        }
      });
      page.on("pageerror", (error: unknown) => void pageErrors.push(String(error)));
      // Registered before any of the page's own scripts run, so no violation goes unseen.
      await page.evaluateOnNewDocument(() => {
        const seen: string[] = [];
        (globalThis as unknown as { __cspViolations: string[] }).__cspViolations = seen;
        document.addEventListener("securitypolicyviolation", (event) => {
          seen.push(`${event.violatedDirective} blocked ${event.blockedURI || "inline"}`);
        });
      });

      const response = await page.goto(`${app.url}/docs`, {
        waitUntil: "networkidle0",
        timeout: STEP_TIMEOUT_MS,
      });
      assert.equal(response?.status(), 200);
      assert.match(response?.headers()["content-security-policy"] ?? "", /script-src 'self'/);

      // Every operation of the document, and no other, as Swagger UI's operation blocks.
      await page.waitForSelector(".opblock .opblock-summary-path");
      const shown = await page.$$eval(".opblock", (blocks) =>
        blocks.map((block) => {
          const method = block.querySelector(".opblock-summary-method")?.textContent?.trim();
          const path = block.querySelector(".opblock-summary-path");
          return `${method?.toUpperCase()} ${
            path?.getAttribute("data-path") ?? path?.textContent?.trim()
          }`;
        }).sort());
      assert.deepEqual(shown, expected);

      // One request from the page, answered live by the app.
      const user = { name: "Grace Hopper", email: "grace@example.com" };
      const live = await tryOperation(page, "post", "/users", user);
      assert.equal(live.status, 201, `status shown: ${live.status}, body shown: ${live.body}`);
      assert.equal(live.undocumented, false, "Swagger UI finds 201 in the document");
      const created = JSON.parse(live.body);
      assert.equal(created.success, true);
      assert.deepEqual({ ...created.data, id: undefined }, { ...user, id: undefined });
      assert.equal(typeof created.data.id, "number");
      // The app really stored it.
      const stored = await fetch(`${app.url}/users/${created.data.id}`);
      assert.equal(stored.status, 200);
      assert.deepEqual((await stored.json()).data, created.data);

      await mkdir(output, { recursive: true });
      await page.screenshot({
        path: fileURLToPath(new URL(`docs_page_${runtimeName}.png`, output)),
        fullPage: true,
      });

      const violations = await page.evaluate(() =>
        (globalThis as unknown as { __cspViolations: string[] }).__cspViolations
      );
      // data: URLs (Swagger UI's icons) are no requests to anywhere.
      const elsewhere = requests.filter((url) =>
        !url.startsWith("data:") && new URL(url).origin !== origin
      );
      assert.deepEqual(elsewhere, [], "requests that left the app's origin");
      assert.ok(requests.includes(`${origin}/openapi.json`), "the page fetched the document");
      assert.ok(requests.includes(`${origin}/users`), "the page sent the request");
      assert.deepEqual(failedRequests, [], "failed requests");
      assert.deepEqual(consoleErrors, [], "console errors");
      assert.deepEqual(pageErrors, [], "page errors");
      assert.deepEqual(violations, [], "Content-Security-Policy violations");
    } finally {
      try {
        await chromium?.close();
      } finally {
        await app.close();
      }
    }
  });
});
