// `node:` modules are imported where used, never at the top: a one-file edge bundle (Wrangler's)
// inlines this module and would hoist them into every worker's first lines.
import { ConfigError } from "../config/config_error.ts";
import { MissingPackageError } from "../runtime/optional_module.ts";

/** A file of the docs page, ready to send. */
export interface DocsFile {
  /** Where it is served: `/docs`, `/docs/swagger-ui.css`. */
  readonly path: string;
  readonly contentType: string;
  readonly body: Uint8Array;
  /** A strong validator of `body`, for `If-None-Match`. */
  readonly etag: string;
}

// The only Swagger UI files the page needs: the bundle carries every script it runs.
const ASSETS = [
  ["swagger-ui-bundle.js", "text/javascript; charset=utf-8"],
  ["swagger-ui.css", "text/css; charset=utf-8"],
] as const;

/**
 * The Swagger UI page for the document at `documentPath`, served under `docsPath`: the page, the
 * script that starts Swagger UI (a file, not inline, so the page runs under a `script-src 'self'`
 * policy), and Swagger UI's own files, read once from the `swagger-ui-dist` package. Nothing
 * comes from a CDN, and Swagger UI's online validator badge is off: the page sends requests to
 * this app only.
 */
export async function docsPage(
  docsPath: string,
  documentPath: string,
  title: string,
): Promise<DocsFile[]> {
  const [{ readFile }, { dirname, join }, { fileURLToPath }] = await Promise.all([
    import("node:fs/promises"),
    import("node:path"),
    import("node:url"),
  ]);
  const dir = dirname(fileURLToPath(swaggerUiFile(docsPath)));
  const files: DocsFile[] = [];
  const add = async (path: string, contentType: string, body: Uint8Array) =>
    files.push({ path, contentType, body, etag: await etagOf(body) });
  const text = (s: string) => new TextEncoder().encode(s);

  await add(docsPath, "text/html; charset=utf-8", text(pageHtml(docsPath, title)));
  await add(
    `${docsPath}/swagger-initializer.js`,
    "text/javascript; charset=utf-8",
    text(
      `window.ui = SwaggerUIBundle(${
        JSON.stringify({
          url: documentPath,
          dom_id: "#swagger-ui",
          deepLinking: true,
          validatorUrl: null,
        })
      });\n`,
    ),
  );
  for (const [name, contentType] of ASSETS) {
    let body: Uint8Array;
    try {
      body = await readFile(join(dir, name));
    } catch (error) {
      throw new ConfigError(
        `app.openapi.docs (${docsPath}): cannot read ${name} of swagger-ui-dist in ${dir}: ` +
          `${(error as Error).message}`,
        { cause: error },
      );
    }
    await add(`${docsPath}/${name}`, contentType, body);
  }
  return files;
}

/**
 * The `file:` URL of `swagger-ui-dist`'s bundle. Resolved, not imported: the package's modules are for
 * Node (`require("path")`), so an import would break every edge bundle of an app, which then
 * carries the module whether or not it serves the page.
 */
function swaggerUiFile(docsPath: string): string {
  const neededBy = `the OpenAPI docs page (app.openapi.docs: ${docsPath}; on an edge runtime, ` +
    `which cannot read files, set it to false)`;
  let url: string;
  try {
    url = import.meta.resolve("swagger-ui-dist/swagger-ui-bundle.js");
  } catch (error) {
    throw new MissingPackageError(
      { packages: ["swagger-ui-dist"], neededBy, what: "Swagger UI's files" },
      { cause: error },
    );
  }
  if (!url.startsWith("file:")) {
    // Deno without a node_modules folder (a JSR install) answers `npm:`; workerd has no files.
    throw new ConfigError(
      `${neededBy}: swagger-ui-dist resolves to ${url}, not a file on disk. Install it into ` +
        `node_modules (npm install swagger-ui-dist; on Deno, "nodeModulesDir": "auto"), or set ` +
        `app.openapi.docs: false and serve the document alone`,
    );
  }
  return url;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function pageHtml(docsPath: string, title: string): string {
  // A path in an attribute: escaped like the title, though it comes from the app's own config.
  const base = escapeHtml(docsPath);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${base}/swagger-ui.css">
</head>
<body>
<div id="swagger-ui"></div>
<script src="${base}/swagger-ui-bundle.js"></script>
<script src="${base}/swagger-initializer.js"></script>
</body>
</html>
`;
}

async function etagOf(body: Uint8Array): Promise<string> {
  const digest = new Uint8Array(
    await crypto.subtle.digest("SHA-256", body as Uint8Array<ArrayBuffer>),
  );
  const hex = Array.from(digest.subarray(0, 16), (b) => b.toString(16).padStart(2, "0")).join("");
  return `"${hex}"`;
}
