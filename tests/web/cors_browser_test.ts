// CORS as a browser enforces it: a page on one origin calls a Thaw app on another (another port of
// 127.0.0.1 is another origin) with a JSON body and a custom header, which makes the browser send
// a preflight first. Headless Chromium, found and launched as the docs page's browser test does
// (tools/chromium.ts: a missing Chromium fails the test, naming the script that installs it).
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import type { Context, Next } from "hono";
import { cors } from "hono/cors";
import type { ConsoleMessage } from "puppeteer-core";
import { launchChromium, STEP_TIMEOUT_MS } from "../../tools/chromium.ts";
import {
  bootstrap,
  GetMapping,
  type MiddlewareItem,
  PostMapping,
  RequestBody,
  RequestHeader,
  ResponseEntity,
  RestController,
} from "../../mod.ts";
import { listen, type Server } from "../../server.ts";

// The page: on load it calls the app named by its `?api=` query, and reports what happened in
// `#result` as JSON, `data-done` set once it is there. Its icon is inline, so that Chromium asks
// nothing else of the page's server (a 404 for /favicon.ico would be a console error).
const PAGE = `<!doctype html>
<html lang="en">
<meta charset="utf-8">
<title>A page on another origin</title>
<link rel="icon" href="data:,">
<pre id="result"></pre>
<script>
(async () => {
  const api = new URLSearchParams(location.search).get("api");
  let result;
  try {
    const response = await fetch(api + "/greetings", {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-Custom": "from-the-page" },
      body: JSON.stringify({ name: "Ada" }),
    });
    result = {
      ok: true,
      status: response.status,
      body: await response.json(),
      greetedBy: response.headers.get("x-greeted-by"),
    };
  } catch (error) {
    result = { ok: false, error: String(error) };
  }
  const out = document.getElementById("result");
  out.textContent = JSON.stringify(result);
  out.dataset.done = "true";
})();
</script>
</html>
`;

@RestController()
class PageController {
  @GetMapping("/")
  page(): ResponseEntity {
    return ResponseEntity.ok(PAGE).withContentType("text/html; charset=utf-8");
  }
}

@RestController()
class GreetingController {
  @PostMapping("/greetings", RequestBody(), RequestHeader("X-Custom"))
  greet(body: unknown, custom: string): ResponseEntity {
    const { name } = body as { name: string };
    return ResponseEntity.ok({ greeting: `Hello, ${name}`, custom })
      .withHeader("X-Greeted-By", "thaw");
  }
}

/** What a request looked like when it reached the app: its method, path and preflight header. */
type Seen = { method: string; path: string; requestHeaders: string | null };

/** A middleware that records every request it sees, and lets it go on. */
function recorder(seen: Seen[]): MiddlewareItem {
  return async (c: Context, next: Next) => {
    seen.push({
      method: c.req.method,
      path: c.req.path,
      requestHeaders: c.req.header("access-control-request-headers") ?? null,
    });
    await next();
  };
}

interface PageReport {
  ok: boolean;
  status?: number;
  body?: unknown;
  greetedBy?: string | null;
  error?: string;
}

/**
 * Serves the page on one port and the app made of `middleware` on another, opens the page in
 * headless Chromium, and returns what the page reports, what the app saw, and Chromium's console
 * errors.
 */
async function run(
  middleware: (pageOrigin: string) => MiddlewareItem[],
): Promise<{ report: PageReport; seen: Seen[]; consoleErrors: string[]; pageOrigin: string }> {
  const servers: Server[] = [];
  let chromium: Awaited<ReturnType<typeof launchChromium>> | undefined;
  try {
    const pages = await bootstrap({ controllers: [PageController] });
    const pageServer = await listen(pages, { port: 0, hostname: "127.0.0.1" });
    servers.push(pageServer);
    const pageOrigin = `http://127.0.0.1:${pageServer.port}`;

    const seen: Seen[] = [];
    const api = await bootstrap({
      controllers: [GreetingController],
      middleware: [recorder(seen), ...middleware(pageOrigin)],
    });
    const apiServer = await listen(api, { port: 0, hostname: "127.0.0.1" });
    servers.push(apiServer);
    const apiOrigin = `http://127.0.0.1:${apiServer.port}`;
    assert.notEqual(apiOrigin, pageOrigin);

    chromium = await launchChromium();
    const page = await chromium.browser.newPage();
    page.setDefaultTimeout(STEP_TIMEOUT_MS);
    const consoleErrors: string[] = [];
    page.on("console", (message: ConsoleMessage) => {
      if (message.type() === "error") consoleErrors.push(message.text());
    });
    const response = await page.goto(`${pageOrigin}/?api=${encodeURIComponent(apiOrigin)}`, {
      waitUntil: "load",
      timeout: STEP_TIMEOUT_MS,
    });
    assert.equal(response?.status(), 200);
    await page.waitForSelector("#result[data-done]", { timeout: STEP_TIMEOUT_MS });
    const text = await page.$eval("#result", (element) => element.textContent ?? "");
    return { report: JSON.parse(text) as PageReport, seen, consoleErrors, pageOrigin };
  } finally {
    try {
      await chromium?.close();
    } finally {
      for (const server of servers.reverse()) await server.close();
    }
  }
}

describe("CORS in a real browser (headless Chromium)", () => {
  it("with cors({ origin: the page's origin }) in bootstrap, the page's preflighted POST succeeds", async () => {
    const { report, seen, consoleErrors } = await run((pageOrigin) => [
      cors({
        origin: pageOrigin,
        allowHeaders: ["Content-Type", "X-Custom"],
        exposeHeaders: ["X-Greeted-By"],
      }),
    ]);
    assert.deepEqual(report, {
      ok: true,
      status: 200,
      body: { greeting: "Hello, Ada", custom: "from-the-page" },
      greetedBy: "thaw",
    });
    // The preflight reached the app, asking for the custom header, and then the POST itself.
    assert.deepEqual(seen.map((s) => `${s.method} ${s.path}`), [
      "OPTIONS /greetings",
      "POST /greetings",
    ]);
    assert.match(seen[0].requestHeaders ?? "", /\bx-custom\b/i);
    assert.deepEqual(consoleErrors, []);
  });

  it("without cors(), the page's fetch fails (TypeError), after the preflight reached the app", async () => {
    const { report, seen, consoleErrors, pageOrigin } = await run(() => []);
    assert.deepEqual(report, { ok: false, error: "TypeError: Failed to fetch" });
    // Thaw answered the preflight itself (204 with Allow, no CORS headers), so the browser never
    // sent the POST.
    assert.deepEqual(seen.map((s) => `${s.method} ${s.path}`), ["OPTIONS /greetings"]);
    assert.match(seen[0].requestHeaders ?? "", /\bx-custom\b/i);
    assert.ok(
      consoleErrors.some((line) =>
        line.includes("blocked by CORS policy") && line.includes(`'${pageOrigin}'`)
      ),
      `Chromium says why: ${consoleErrors.join(" | ")}`,
    );
  });
});
