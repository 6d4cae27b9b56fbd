// The `security` health component: each issuer whose keys are fetched (UP once keys are held,
// DOWN while none are and the last fetch failed) and the introspection endpoint (UP while it
// answers the client), by its URL; DOWN naming those that are not up. A public key has nothing to
// fetch, and no component.
import { type HealthCheck, HealthIndicator } from "../actuator/health_indicator.ts";
import type { Class } from "../context/class.ts";
import { maskUrls } from "../config/secrets_mask.ts";
import type { SourceHealth } from "./remote_key_set.ts";

/** One key source or endpoint the component reports. */
export interface HealthSource {
  /** `issuer` (a key set) or `introspection`. */
  readonly kind: "issuer" | "introspection";
  /** Its URL (masked in the report): the issuer's, the key set's, the endpoint's. */
  readonly url: string;
  readonly check: () => Promise<SourceHealth>;
}

/** The indicator class of an app's key sources and introspection endpoint. */
export function securityHealth(sources: readonly HealthSource[]): Class {
  @HealthIndicator("security")
  class SecurityHealthIndicator implements HealthCheck {
    async check(): Promise<Record<string, unknown>> {
      // A list, not a map by URL: a URL is no key the health body's masking reads as a name.
      const checked = await Promise.all(sources.map(async (source) => {
        const { up, error } = await source.check();
        const url = maskUrls(source.url);
        return up
          ? { kind: source.kind, url, status: "UP" as const }
          : { kind: source.kind, url, status: "DOWN" as const, error };
      }));
      const down = checked.filter((health) => health.status === "DOWN");
      // Each error names its URL already.
      if (down.length > 0) throw new Error(down.map((health) => health.error).join("; "));
      return { sources: checked };
    }
  }
  return SecurityHealthIndicator;
}
