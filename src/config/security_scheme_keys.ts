/**
 * The keys of HTTP Basic (`security.basic.*`) and of API keys (`security.api-keys.*`), declared
 * by their modules as the resource server's are: an app that does not import them neither carries
 * them nor has them checked; one that does has every key under those two checked (a typo refused
 * with the key it was meant as), while the rest of `security` stays the app's.
 *
 * @module
 */
import { declareKeys, type KeyDeclaration } from "./thaw_keys.ts";

/** The keys of the schemes other than the bearer token. */
export const SECURITY_SCHEME_KEYS = {
  "security.basic.realm": {
    type: "string",
    default: "Realm",
  },
  // The cost of the dummy hash an unknown user is checked against: that of the users' hashes.
  "security.basic.iterations": {
    type: "integer",
    min: 1000,
    max: 10_000_000,
    default: 600_000,
  },
  "security.api-keys.header-name": {
    type: "string",
    default: "X-API-Key",
  },
  // Each key by name: `{ key, authorities }`, read and checked by the API keys' settings.
  "security.api-keys.keys": {
    type: "feature",
  },
} as const satisfies Readonly<Record<string, KeyDeclaration>>;

declareKeys(SECURITY_SCHEME_KEYS);
