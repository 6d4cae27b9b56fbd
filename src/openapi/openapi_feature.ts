// What `bootstrap` knows of the OpenAPI generator: an opaque value made by `openApi()` of the
// `openapi` entry point, so that the default entry neither imports nor (bundled) carries it.
import type { ThawSettings } from "../config/thaw_settings.ts";
import type { Class } from "../context/class_record.ts";
import type { CompiledRoute } from "../web/compile.ts";
import type { MiddlewareEntry } from "../web/route_record.ts";
import type { DocumentedRoute, OpenApiDocument } from "./openapi_document.ts";
import { featureKind } from "../feature_value.ts";

/**
 * The OpenAPI document and docs page, for `bootstrap({ openapi })`: made by `openApi()` of
 * `@thaw/thaw/openapi`.
 */
export interface OpenApiFeature {
  /** What this is, for messages. */
  readonly feature: "openapi";
}

/** What the app gives the generator. */
export interface OpenApiInput {
  readonly documented: readonly DocumentedRoute[];
  readonly settings: ThawSettings;
  /** Whether errors are answered by the default error controller (its body is documented). */
  readonly defaultErrorBody: boolean;
  /** `bootstrap({ middleware })`, which guards every documented route. */
  readonly middleware: readonly MiddlewareEntry[];
  /** The bean of a middleware class, whose `describe` the document asks. */
  readonly beanOf: (type: Class) => unknown;
}

/** The routes that serve the document, and the document as served. */
export interface OpenApiServing {
  readonly routes: CompiledRoute[];
  readonly document: () => Promise<OpenApiDocument>;
}

type Setup = (input: OpenApiInput) => Promise<OpenApiServing>;
const kind = featureKind<"openapi", Setup>("openapi", "openapi", "openApi", "@thaw/thaw/openapi");

/** Makes the value `bootstrap({ openapi })` takes. */
export const openApiFeature = (setup: Setup): OpenApiFeature => kind.make(setup);

/** The generator behind a feature value; a `TypeError` for anything `openApi()` did not make. */
export const openApiSetup = (feature: unknown): Setup => kind.setupOf(feature);

/** `true`/`false`, also as the text a `${VAR}` placeholder gives; anything else: `undefined`. */
export function asFlag(value: unknown): boolean | undefined {
  if (value === true || value === "true") return true;
  if (value === false || value === "false") return false;
  return undefined;
}

/**
 * Whether the `app.openapi` keys ask for something to be served: set, and not turned off by
 * `app.openapi: false` or `app.openapi.enabled: false`.
 */
export function openApiConfigured(value: unknown): boolean {
  if (value === undefined || value === null) return false;
  const flag = asFlag(value);
  if (flag !== undefined) return flag;
  if (typeof value === "object" && !Array.isArray(value)) {
    return asFlag((value as Record<string, unknown>).enabled) !== false;
  }
  return true;
}
