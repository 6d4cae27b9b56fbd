/**
 * Headless Chromium for the docs page's browser test and `tools/docs_screenshot.ts`: finds the
 * Debian binary that `tools/system_packages.sh` installs, launches it through puppeteer-core, and
 * drives Swagger UI's "Try it out" for one operation.
 *
 * @module
 */
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import puppeteer, { type Browser, type ElementHandle, type Page } from "puppeteer-core";

/** Where Chromium is looked for when `CHROMIUM_PATH` is not set: Debian's first. */
export const KNOWN_CHROMIUM_PATHS: readonly string[] = [
  "/usr/bin/chromium",
  "/usr/bin/chromium-browser",
  "/usr/bin/google-chrome-stable",
  "/usr/bin/google-chrome",
];

/** Each step's deadline: generous, since the page waits on real conditions, never on sleeps. */
export const STEP_TIMEOUT_MS = 60_000;

/**
 * The Chromium binary: `CHROMIUM_PATH` when set (it must exist), else the first of
 * {@linkcode KNOWN_CHROMIUM_PATHS} that exists. Throws, naming the script that installs it, when
 * there is none: the browser test fails rather than skips.
 */
export function chromiumPath(): string {
  const fromEnv = process.env.CHROMIUM_PATH;
  if (fromEnv) {
    if (existsSync(fromEnv)) return fromEnv;
    throw new Error(
      `CHROMIUM_PATH=${fromEnv} does not exist: unset it to use the Chromium that ` +
        "`bash tools/system_packages.sh` installs",
    );
  }
  const found = KNOWN_CHROMIUM_PATHS.find((path) => existsSync(path));
  if (found !== undefined) return found;
  throw new Error(
    `no Chromium found (looked at CHROMIUM_PATH and ${KNOWN_CHROMIUM_PATHS.join(", ")}): ` +
      "run `bash tools/system_packages.sh` as root (it installs Debian's chromium), " +
      "or set CHROMIUM_PATH",
  );
}

/** A launched browser; `close()` ends it and removes its profile. */
export interface Chromium {
  readonly browser: Browser;
  close(): Promise<void>;
}

/**
 * Launches headless Chromium with a fresh profile in a temporary directory, without the sandbox
 * (CI runs as root, where Chromium refuses it). Always `close()` it in a `finally`.
 */
export async function launchChromium(
  options: { width?: number; height?: number } = {},
): Promise<Chromium> {
  const executablePath = chromiumPath();
  const userDataDir = await mkdtemp(join(tmpdir(), "thaw-chromium-"));
  let browser: Browser;
  try {
    browser = await puppeteer.launch({
      executablePath,
      browser: "chrome",
      headless: true,
      userDataDir,
      // Over stdio pipes, not a WebSocket: no port, and the same transport on every runtime.
      pipe: true,
      timeout: STEP_TIMEOUT_MS,
      protocolTimeout: STEP_TIMEOUT_MS,
      // The test and the tool end the browser themselves, in their `finally`.
      handleSIGINT: false,
      handleSIGTERM: false,
      handleSIGHUP: false,
      defaultViewport: { width: options.width ?? 1280, height: options.height ?? 800 },
      args: ["--no-sandbox", "--disable-dev-shm-usage", "--no-first-run"],
    });
  } catch (error) {
    await rm(userDataDir, { recursive: true, force: true });
    throw new Error(`cannot launch ${executablePath}: ${(error as Error).message}`, {
      cause: error,
    });
  }
  return {
    browser,
    async close() {
      try {
        await browser.close();
      } finally {
        await rm(userDataDir, { recursive: true, force: true, maxRetries: 3 });
      }
    },
  };
}

/** What Swagger UI shows of one live response. */
export interface ShownResponse {
  status: number;
  body: string;
  /** Whether Swagger UI marks the status as one the document does not list. */
  undocumented: boolean;
}

/**
 * The operation block Swagger UI shows for `method` and `path`, found by its method and path
 * labels (not by its id, whose form is Swagger UI's own business).
 */
export async function operationBlock(
  page: Page,
  method: string,
  path: string,
): Promise<ElementHandle<Element>> {
  await page.waitForSelector(".opblock", { timeout: STEP_TIMEOUT_MS });
  for (const block of await page.$$(".opblock")) {
    const shown = await block.evaluate((el) => ({
      method: el.querySelector(".opblock-summary-method")?.textContent?.trim() ?? "",
      path: el.querySelector(".opblock-summary-path")?.getAttribute("data-path") ??
        el.querySelector(".opblock-summary-path")?.textContent?.trim() ?? "",
    }));
    if (shown.method.toLowerCase() === method.toLowerCase() && shown.path === path) return block;
    await block.dispose();
  }
  throw new Error(`Swagger UI shows no operation ${method.toUpperCase()} ${path}`);
}

/**
 * Runs one operation from the page as a user would: expands it, clicks "Try it out", puts `body`
 * (JSON) in the request body editor when given, clicks "Execute", and waits for the live response
 * Swagger UI shows.
 */
export async function tryOperation(
  page: Page,
  method: string,
  path: string,
  body?: unknown,
): Promise<ShownResponse> {
  const block = await operationBlock(page, method, path);
  await (await block.waitForSelector(".opblock-summary-control", { timeout: STEP_TIMEOUT_MS }))!
    .click();
  await (await block.waitForSelector("button.try-out__btn", { timeout: STEP_TIMEOUT_MS }))!
    .click();
  if (body !== undefined) {
    const editor = (await block.waitForSelector("textarea.body-param__text", {
      timeout: STEP_TIMEOUT_MS,
    }))!;
    // Replaces the example Swagger UI fills in: select all, then type.
    await editor.click({ count: 3 });
    await editor.evaluate((el) => (el as HTMLTextAreaElement).select());
    await page.keyboard.press("Backspace");
    await editor.type(JSON.stringify(body));
  }
  await (await block.waitForSelector("button.execute", { timeout: STEP_TIMEOUT_MS }))!.click();
  // The live response: the row under "Server response", not the documented ones.
  const row = (await block.waitForSelector(".live-responses-table .response", {
    timeout: STEP_TIMEOUT_MS,
  }))!;
  const shown = await row.evaluate((el) => ({
    // The cell's own text: Swagger UI adds an "Undocumented" note after a status the document
    // does not list.
    status: Array.from(el.querySelector(".response-col_status")?.childNodes ?? [])
      .filter((node) => node.nodeType === 3).map((node) => node.textContent).join("").trim(),
    undocumented: el.querySelector(".response-col_status .response-undocumented") !== null,
    body: el.querySelector(".response-col_description .microlight")?.textContent ??
      el.querySelector(".response-col_description pre")?.textContent ?? "",
  }));
  await block.dispose();
  return { status: Number(shown.status), body: shown.body, undocumented: shown.undocumented };
}

/**
 * Fills in Swagger UI's "Authorize" dialog with a bearer token as a person would: opens it, types
 * the token, clicks "Authorize", then "Close", and waits for the closed lock on the page's button.
 */
export async function authorize(page: Page, token: string): Promise<void> {
  const wait = { timeout: STEP_TIMEOUT_MS };
  await (await page.waitForSelector(".auth-wrapper button.authorize", wait))!.click();
  await (await page.waitForSelector("#auth-bearer-value", wait))!.type(token);
  await (await page.waitForSelector(".auth-btn-wrapper button.authorize", wait))!.click();
  await (await page.waitForSelector(".auth-btn-wrapper button.btn-done", wait))!.click();
  await page.waitForSelector(".auth-wrapper button.authorize.locked", wait);
}
