import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdir } from "node:fs/promises";
import process from "node:process";
import { fileURLToPath } from "node:url";
import type { ConsoleMessage, HTTPRequest } from "puppeteer-core";
import type { Context, Next } from "hono";
import { authorize, launchChromium, STEP_TIMEOUT_MS, tryOperation } from "../../tools/chromium.ts";
import { listen } from "../../server.ts";
import {
  bootstrap,
  Component,
  GetMapping,
  type Middleware,
  type MiddlewareDocs,
  PostMapping,
  RequestBody,
  ResponseStatus,
  RestController,
  UseMiddleware,
} from "../../mod.ts";
import { openApi } from "../../openapi.ts";
import { exportSPKI } from "jose";
import { Secured, security } from "../../security.ts";
import { memoryLogger } from "../helpers.ts";
import { signingKey, token } from "../security/issuer_server.ts";
import { RUNTIME } from "../runtime.ts";
import { adminToken, type Storage, STORAGES, usersApps } from "../examples/users_storage.ts";

const output = new URL("../output/", import.meta.url);
const runtimeName = RUNTIME === "node" ? `node${process.versions.node.split(".")[0]}` : RUNTIME;

/**
 * The sample users app served on a free port of this runtime, as
 * tests/examples/users_server_test.ts serves it: on a fresh SQLite database, migrated as main.ts
 * migrates it, where the runtime has node:sqlite, else in memory (Node 20).
 */
async function serveUsersApp(
  open: ReturnType<typeof usersApps>,
): Promise<{ url: string; storage: Storage; close(): Promise<void> }> {
  const storage = STORAGES.at(-1)!;
  const users = await open(storage);
  const server = await listen(users.unauthenticated, { port: 0, hostname: "127.0.0.1" });
  return {
    url: server.url,
    storage,
    close: async () => {
      try {
        await server.close();
      } finally {
        await users.close();
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

/** A guard that takes one bearer token, and says so to the document. */
@Component()
class TokenGuard implements Middleware {
  async handle(c: Context, next: Next): Promise<Response | void> {
    if (c.req.header("authorization") !== "Bearer s3cret") {
      return c.json({ error: "no valid token" }, 401);
    }
    await next();
  }
  describe(): MiddlewareDocs {
    return {
      securitySchemes: { bearer: { type: "http", scheme: "bearer" } },
      responses: { 401: "No valid bearer token" },
    };
  }
}

@RestController()
@UseMiddleware(TokenGuard)
class NotesController {
  @GetMapping("/notes")
  list(): string[] {
    return ["first"];
  }

  @ResponseStatus(201)
  @PostMapping("/notes", RequestBody())
  create(note: unknown) {
    return { created: note };
  }
}

@RestController()
class ReportsController {
  @GetMapping("/reports")
  @Secured("SCOPE_reports:read")
  list(): string[] {
    return ["q3"];
  }
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
      // The app needs a bearer token: the page sends a dev one with each request, as a person
      // with a token would.
      const authorization = `Bearer ${await adminToken()}`;
      await page.setExtraHTTPHeaders({ authorization });
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
      const stored = await fetch(`${app.url}/users/${created.data.id}`, {
        headers: { authorization },
      });
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

  it("tries a guarded route after Authorize, with the token the page was given", async () => {
    const app = await bootstrap({
      controllers: [NotesController],
      components: [TokenGuard],
      openapi: openApi(),
    });
    const server = await listen(app, { port: 0, hostname: "127.0.0.1", quiet: true });
    let chromium: Awaited<ReturnType<typeof launchChromium>> | undefined;
    try {
      const document = await (await fetch(`${server.url}/openapi.json`)).json();
      assert.deepEqual(document.components.securitySchemes, {
        bearer: { type: "http", scheme: "bearer" },
      });
      assert.deepEqual(document.paths["/notes"].get.security, [{ bearer: [] }]);

      chromium = await launchChromium();
      const page = await chromium.browser.newPage();
      page.setDefaultTimeout(STEP_TIMEOUT_MS);
      const pageErrors: string[] = [];
      const sent: { url: string; authorization?: string }[] = [];
      page.on("pageerror", (error: unknown) => void pageErrors.push(String(error)));
      page.on("request", (request: HTTPRequest) => {
        if (new URL(request.url()).pathname === "/notes") {
          sent.push({ url: request.url(), authorization: request.headers()["authorization"] });
        }
      });
      await page.goto(`${server.url}/docs`, {
        waitUntil: "networkidle0",
        timeout: STEP_TIMEOUT_MS,
      });

      // Refused without a token, with the answer the guard documents.
      const refused = await tryOperation(page, "get", "/notes");
      assert.equal(refused.status, 401, `status shown: ${refused.status}, body: ${refused.body}`);
      assert.equal(refused.undocumented, false, "Swagger UI finds the guard's 401 in the document");

      await authorize(page, "s3cret");
      const created = await tryOperation(page, "post", "/notes", { text: "hi" });
      assert.equal(created.status, 201, `status shown: ${created.status}, body: ${created.body}`);
      assert.equal(created.undocumented, false, "Swagger UI finds @ResponseStatus's 201");
      assert.deepEqual(JSON.parse(created.body), { created: { text: "hi" } });
      assert.deepEqual(sent.map((s) => s.authorization), [undefined, "Bearer s3cret"]);
      assert.deepEqual(pageErrors, [], "page errors");
    } finally {
      try {
        await chromium?.close();
      } finally {
        await server.close();
      }
    }
  });

  it("shows security()'s bearerAuth: Authorize, then a secured route with a real JWT", async () => {
    const key = await signingKey("k1", "ES256");
    const app = await bootstrap({
      controllers: [ReportsController],
      config: {
        security: {
          "permit-all": ["/openapi.json", "/docs/**"],
          oauth2: { resourceserver: { jwt: { "public-key": await exportSPKI(key.publicKey) } } },
        },
      },
      logger: memoryLogger(),
      security: security(),
      openapi: openApi(),
    });
    const server = await listen(app, { port: 0, hostname: "127.0.0.1", quiet: true });
    let chromium: Awaited<ReturnType<typeof launchChromium>> | undefined;
    try {
      chromium = await launchChromium();
      const page = await chromium.browser.newPage();
      page.setDefaultTimeout(STEP_TIMEOUT_MS);
      const pageErrors: string[] = [];
      page.on("pageerror", (error: unknown) => void pageErrors.push(String(error)));
      await page.goto(`${server.url}/docs`, {
        waitUntil: "networkidle0",
        timeout: STEP_TIMEOUT_MS,
      });

      // The lock Swagger UI puts on an operation that has a requirement.
      await page.waitForSelector(".opblock-get .authorization__btn");
      const jwt = await token(key, { scope: "reports:read" }, Date.now());
      await authorize(page, jwt);
      const listed = await tryOperation(page, "get", "/reports");
      assert.equal(listed.status, 200, `status shown: ${listed.status}, body: ${listed.body}`);
      assert.deepEqual(JSON.parse(listed.body), ["q3"]);
      assert.equal(listed.undocumented, false, "Swagger UI finds the operation's 200");
      assert.deepEqual(pageErrors, [], "page errors");
    } finally {
      try {
        await chromium?.close();
      } finally {
        await server.close();
      }
    }
  });
});
