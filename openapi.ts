/**
 * The OpenAPI 3.1 generator and its Swagger UI docs page: `openApi(options)` for
 * `bootstrap({ openapi })`, and `openApiDocument(app)` for the document itself (to write it to a
 * file, or generate a typed client from it). Apart from the default entry point so that an app
 * that serves no document carries no generator.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { bootstrap, GetMapping, RestController } from "@thaw/thaw";
 * import { openApi } from "@thaw/thaw/openapi";
 *
 * @RestController()
 * class PingController {
 *   @GetMapping("/ping")
 *   ping(): string {
 *     return "pong";
 *   }
 * }
 *
 * const app = await bootstrap({ controllers: [PingController], openapi: openApi() });
 * const page = await app.fetch(new Request("http://localhost/docs"));
 * assert.equal(page.status, 200);
 * assert.match(page.headers.get("content-type") ?? "", /^text\/html/);
 * ```
 *
 * @module
 */
export { openApi, openApiDocument } from "./src/openapi/open_api.ts";
export type { OpenApiFeature } from "./src/openapi/openapi_feature.ts";
export type { OpenApiDocument } from "./src/openapi/openapi_document.ts";
export type { OpenApiOptions } from "./src/openapi/openapi_options.ts";
export type { JsonSchema } from "./src/openapi/json_schema.ts";
