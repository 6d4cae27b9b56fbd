// What the actuator shows of the app's own values (the `info` section, a health check's details
// and errors): every value under a key named like a secret, every URL's credentials and every
// secret the configuration holds, masked alike wherever they are shown.
import { configSecrets, isSecretKey, type LoadedConfig } from "../config/application_config.ts";
import { composeMasks, maskJson, maskUrls, secretsMask } from "../config/secrets_mask.ts";

// Every value under a key named like a secret, whatever its type (`password: 123456` is a number
// to YAML), as `***`.
function maskSecretKeys(value: unknown, depth = 0): unknown {
  if (typeof value !== "object" || value === null || depth > 64) return value;
  if (Array.isArray(value)) return value.map((v) => maskSecretKeys(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value)) {
    Object.defineProperty(out, key, {
      value: isSecretKey(key) && child !== null && child !== undefined
        ? "***"
        : maskSecretKeys(child, depth + 1),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}

/**
 * The mask of what the actuator shows of a JSON value: values under keys named like secrets are
 * `***`, then every string (keys included) has its URLs' credentials and the configuration's
 * secrets masked.
 *
 * @param config the app's configuration, whose secrets no answer may show
 * @returns a function from a JSON value to a masked copy of it
 */
export function shownValueMask(config: LoadedConfig): (value: unknown) => unknown {
  const mask = composeMasks(maskUrls, secretsMask(configSecrets(config)));
  return (value) => maskJson(maskSecretKeys(value), mask);
}
