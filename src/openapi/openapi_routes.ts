// Loaded by `bootstrap` only for an app that serves its document: an app without OpenAPI never
// evaluates this module, the generator or the docs page, nor (bundled in chunks) carries them.
import type { Context } from "hono";
import type { CompiledRoute } from "../web/compile.ts";
import { parsePathRegex } from "../web/path_regex.ts";
import { parsePathPattern } from "../web/path_pattern.ts";
import { type DocsFile, docsPage } from "./docs_page.ts";
import type { OpenApiDocument } from "./openapi_document.ts";
import type { OpenApiSettings } from "./openapi_options.ts";

// The page runs Swagger UI's bundle and the initializer, both from this app; Swagger UI sets
// inline styles and shows data: images; its requests go to this app only.
const PAGE_POLICY = "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; " +
  "script-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; " +
  "frame-ancestors 'self'";

function route(path: string, label: string, handler: CompiledRoute["handler"]): CompiledRoute {
  return { httpMethod: "GET", pattern: parsePathPattern(path, parsePathRegex), label, handler };
}

function serveFile(file: DocsFile): CompiledRoute["handler"] {
  return (c: Context) => {
    const headers: Record<string, string> = {
      "content-type": file.contentType,
      // Revalidated each time (the files change with the package), answered 304 when unchanged.
      "cache-control": "no-cache",
      etag: file.etag,
      "x-content-type-options": "nosniff",
    };
    if (file.contentType.startsWith("text/html")) headers["content-security-policy"] = PAGE_POLICY;
    // Weak comparison (RFC 9110 13.1.2): a proxy that compresses the file marks the tag `W/`.
    const match = c.req.header("if-none-match");
    if (
      match !== undefined &&
      match.split(",").some((tag) => {
        const t = tag.trim();
        return t === "*" || t.replace(/^W\//, "") === file.etag;
      })
    ) {
      return new Response(null, { status: 304, headers });
    }
    return new Response(file.body as Uint8Array<ArrayBuffer>, { headers });
  };
}

/** The routes that serve the document and, where configured, the docs page. */
export async function openApiRoutes(
  document: OpenApiDocument,
  settings: OpenApiSettings,
): Promise<CompiledRoute[]> {
  const routes: CompiledRoute[] = [];
  if (settings.path === undefined) return routes;
  const json = JSON.stringify(document);
  routes.push(route(
    settings.path,
    `the OpenAPI document (app.openapi.path: GET ${settings.path})`,
    () =>
      new Response(json, {
        headers: { "content-type": "application/json", "x-content-type-options": "nosniff" },
      }),
  ));
  if (settings.docs !== undefined) {
    for (const file of await docsPage(settings.docs, settings.path, settings.title)) {
      routes.push(
        route(file.path, `the docs page (app.openapi.docs: GET ${file.path})`, serveFile(file)),
      );
    }
  }
  return routes;
}
