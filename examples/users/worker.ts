// The sample users app on workerd / Cloudflare Workers, where there is no file system to scan:
// the bean classes come from the generated manifest. Regenerate it after adding a bean class:
//   deno run -A cli.ts manifest examples/users/src --out examples/users/thaw_manifest.ts
// Bundle with `npm run bundle:worker`, serve with workerd (workerd/config.capnp) or Wrangler.
// workerd has no SQLite: the users are kept in memory, per isolate. It serves the OpenAPI document
// at /openapi.json, without the docs page, whose files are read from disk, /actuator/health (no
// database, so no `db` component: UP once the app has started) and /actuator/prometheus. Its routes
// need a bearer token, checked against the dev key (DEV ONLY: `npm run token` prints one; a
// deployment puts its identity provider's public key, or jwk-set-uri, there instead). The caller
// is bound to the request with AsyncLocalStorage: workerd/config.capnp turns on `nodejs_als`.
import * as api from "@opentelemetry/api";
import * as sdkMetrics from "@opentelemetry/sdk-metrics";
import { PrometheusSerializer } from "@opentelemetry/exporter-prometheus/build/src/PrometheusSerializer.js";
import { bootstrap } from "../../mod.ts";
import { actuator } from "../../actuator.ts";
import { openApi } from "../../openapi.ts";
import { security } from "../../security.ts";
import { DEV_OAUTH2 } from "./dev/dev_public_key.ts";
import { MemoryUserRepository } from "./storage/memory_user_repository.ts";
import { components, controllers } from "./thaw_manifest.ts";

export default await bootstrap({
  controllers,
  components: [...components, MemoryUserRepository],
  // No application.yml on the edge: the configuration is an object.
  config: {
    management: { endpoints: { web: { exposure: { include: "health,prometheus" } } } },
    security: {
      oauth2: DEV_OAUTH2,
      // Open: the document, and the metrics, which a scraper inside the network reads.
      "permit-all": ["/openapi.json", "/actuator/prometheus"],
    },
  },
  openapi: openApi({ docs: false, title: "Users", version: "1.0.0" }),
  // /actuator/health: UP once the app has started. The actuator imports no OpenTelemetry module
  // that a bundle would hold: the app imports them, above, and hands them in, so that
  // /actuator/prometheus is served on workerd too.
  actuator: actuator({ opentelemetry: { api, sdkMetrics, PrometheusSerializer } }),
  security: security(),
});
