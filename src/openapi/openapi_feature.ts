// What `bootstrap` knows of the OpenAPI generator: an opaque value made by `openApi()` of the
// `openapi` entry point, so that the default entry neither imports nor (bundled) carries it.
import type { ThawSettings } from "../config/thaw_settings.ts";
import type { CompiledRoute } from "../web/compile.ts";
import type { DocumentedRoute, OpenApiDocument } from "./openapi_document.ts";

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
}

/** The routes that serve the document, and the document as served. */
export interface OpenApiServing {
  readonly routes: CompiledRoute[];
  readonly document: () => Promise<OpenApiDocument>;
}

type Setup = (input: OpenApiInput) => Promise<OpenApiServing>;
const setups = new WeakMap<OpenApiFeature, Setup>();

/** Makes the value `bootstrap({ openapi })` takes. */
export function openApiFeature(setup: Setup): OpenApiFeature {
  const feature: OpenApiFeature = Object.freeze({ feature: "openapi" });
  setups.set(feature, setup);
  return feature;
}

/** The generator behind a feature value; a `TypeError` for anything `openApi()` did not make. */
export function openApiSetup(feature: unknown): Setup {
  const setup = typeof feature === "object" && feature !== null
    ? setups.get(feature as OpenApiFeature)
    : undefined;
  if (setup === undefined) {
    if ((feature as { feature?: unknown } | null)?.feature === "openapi") {
      throw new TypeError(
        "bootstrap({ openapi }) takes what openApi() of this copy of @thaw/thaw returns; this " +
          "one comes from another copy (npm and JSR, or two versions): import every entry point " +
          "from one",
      );
    }
    throw new TypeError(
      `bootstrap({ openapi }) takes what openApi() returns (import { openApi } from ` +
        `"@thaw/thaw/openapi"), or false; got ${
          feature === null
            ? "null"
            : typeof feature === "function"
            ? `the function ${feature.name || "(anonymous)"}: call it, ${
              feature.name || "openApi"
            }()`
            : typeof feature === "object"
            ? "an object"
            : JSON.stringify(feature)
        }`,
    );
  }
  return setup;
}

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
