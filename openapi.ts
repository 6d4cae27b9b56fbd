/**
 * The OpenAPI 3.1 generator and its Swagger UI docs page: `openApi(options)` for
 * `bootstrap({ openapi })`, and `openApiDocument(app)` for the document itself (to write it to a
 * file, or generate a typed client from it). Apart from the default entry point so that an app
 * that serves no document carries no generator.
 *
 * @see https://github.com/thaw/thaw/blob/main/docs/openapi.md#thawthawopenapi
 *
 * @module
 */
export { openApi, openApiDocument } from "./src/openapi/open_api.ts";
export type { OpenApiFeature } from "./src/openapi/openapi_feature.ts";
export type { OpenApiDocument } from "./src/openapi/openapi_document.ts";
export type { OpenApiOptions } from "./src/openapi/openapi_options.ts";
export type { JsonSchema } from "./src/openapi/json_schema.ts";
