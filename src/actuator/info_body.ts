// `info`'s answer: Thaw's version, the runtime, and the configuration's `info` section, masked.
import { ConfigError } from "../config/config_error.ts";
import { configLocation, configValue, type LoadedConfig } from "../config/application_config.ts";
import { VERSION } from "../version.ts";
import { isMapping } from "../object_guards.ts";
import { onWorkerd } from "../runtime/on_workerd.ts";
import { shownValueMask } from "./shown_values.ts";

function runtime(): { name: string; version: string } {
  const g = globalThis as {
    Deno?: { version: { deno: string } };
    Bun?: { version: string };
    process?: { versions?: { node?: string } };
    navigator?: { userAgent?: string };
  };
  // Before `process`: workerd's says it is Node 22.
  if (onWorkerd()) return { name: "workerd", version: "" };
  if (g.Deno !== undefined) return { name: "deno", version: g.Deno.version.deno };
  if (g.Bun !== undefined) return { name: "bun", version: g.Bun.version };
  if (g.process?.versions?.node !== undefined) {
    return { name: "node", version: g.process.versions.node };
  }
  return { name: g.navigator?.userAgent ?? "unknown", version: "" };
}

/**
 * `GET {base}/info`: Thaw's version and the runtime, then the `info` section of the
 * configuration (Spring's `info.*`; its keys win), with every value under a key named like a
 * secret, and every secret the configuration holds, masked. A section that is no JSON (a BigInt,
 * a cycle, in a configuration object) stops `bootstrap`.
 */
export function infoBody(config: LoadedConfig): string {
  const section = configValue(config.values, "info");
  const info = isMapping(section) ? shownValueMask(config)(section) : {};
  try {
    return JSON.stringify({ thaw: { version: VERSION }, runtime: runtime(), ...(info as object) });
  } catch (error) {
    throw new ConfigError(
      `${configLocation(config, "info")}: the info section cannot be served as JSON: ` +
        (error as Error).message,
      { cause: error },
    );
  }
}
