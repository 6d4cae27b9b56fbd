import { internalsOf } from "../application_internals.ts";
import { type OpenApiFeature, openApiFeature } from "./openapi_feature.ts";
import { buildOpenApiDocument, type OpenApiDocument } from "./openapi_document.ts";
import type { DocumentedRoute } from "./documented_route.ts";
import type { RouteToDocument } from "../application_internals.ts";
import { checkOptionKeys, type OpenApiOptions, openApiSettings } from "./openapi_options.ts";
import { openApiRoutes } from "./openapi_routes.ts";
import { guardsOf, withDocumentedGuard } from "./security.ts";
import { definedFields } from "../defined_fields.ts";

/**
 * Serves the OpenAPI 3.1 document of the app's routes and its Swagger UI docs page, at
 * `/openapi.json` and `/docs` unless the options or the `app.openapi` keys of the configuration
 * say otherwise (the options win). Give it to `bootstrap({ openapi })`. Throws a `ConfigError`
 * at startup naming the key (and its line) for a wrong type, an unknown key or a path that is not
 * a plain literal path.
 *
 * @see https://github.com/thaw/thaw/blob/main/docs/openapi.md#openapi
 */
export function openApi(options: OpenApiOptions = {}): OpenApiFeature {
  // Checked here, not at startup: `openApi(false)` would otherwise serve nothing without a word.
  checkOptionKeys(
    options,
    "openApi()",
    "to serve nothing, pass bootstrap({ openapi: false })",
  );
  return openApiFeature((thaw) => {
    const settings = openApiSettings(thaw, options);
    return Promise.resolve(async (host) => {
      const { documented, defaultErrorBody, middleware, beanOf } = host;
      let document: Promise<OpenApiDocument> | undefined;
      const guards = withDocumentedGuard(guardsOf(middleware, beanOf), host.documentedGuard);
      const build = () =>
        document ??= Promise.resolve().then(() =>
          buildOpenApiDocument(describe(documented), { ...settings, defaultErrorBody, guards })
        );
      const routes = settings.path === undefined
        ? []
        : await openApiRoutes(await build(), settings);
      return { routes, internals: { openapi: build } };
    });
  });
}

/**
 * The OpenAPI 3.1 document of an application's routes. An app that serves one gets the one it
 * serves (then `options` are refused: they would describe another document); any other app a
 * document built from the `app.openapi` keys of its configuration and `options` (the options win),
 * once per app when no options are given. Rejects with a `TypeError` for anything `bootstrap` did
 * not return, and with a `ConfigError` for a bad option.
 *
 * @see https://github.com/thaw/thaw/blob/main/docs/openapi.md#openapidocument
 */
export async function openApiDocument(
  app: object,
  options?: OpenApiOptions,
): Promise<OpenApiDocument> {
  const internals = internalsOf(app, "openApiDocument(app)");
  if (internals.openapi !== undefined) {
    if (options !== undefined) {
      throw new TypeError(
        "openApiDocument(app, options): this app was given openApi() at bootstrap, whose " +
          "options and keys make its document; call openApiDocument(app)",
      );
    }
    return await internals.openapi();
  }
  const build = () =>
    buildOpenApiDocument(describe(internals.documented), {
      ...openApiSettings(
        internals.settings,
        { ...(options ?? {}), enabled: false },
        "openApiDocument(app, options)",
      ),
      defaultErrorBody: internals.defaultErrorBody,
      guards: withDocumentedGuard(
        guardsOf(internals.middleware, internals.beanOf),
        internals.documentedGuard,
      ),
    });
  if (options !== undefined) {
    checkOptionKeys(options, "openApiDocument(app, options)");
    return build();
  }
  let built = documents.get(app);
  if (built === undefined) {
    built = Promise.resolve().then(build);
    documents.set(app, built);
  }
  return await built;
}

// What the document says of each route: a controller's, read from its compiled route; a route a
// feature documents, as it does.
function describe(routes: readonly RouteToDocument[]): DocumentedRoute[] {
  return routes.map((route) =>
    "pattern" in route
      ? {
        httpMethod: route.httpMethod,
        path: route.pattern.source,
        variables: route.pattern.variables,
        ...definedFields({ method: route.method, access: route.access }),
      }
      : route
  );
}

// Built once per app, on the first call without options.
const documents = new WeakMap<object, Promise<OpenApiDocument>>();
