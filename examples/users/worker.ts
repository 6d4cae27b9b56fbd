// The sample users app on workerd / Cloudflare Workers, where there is no file system to scan:
// the bean classes come from the generated manifest. Regenerate it after adding a bean class:
//   deno run -A cli.ts manifest examples/users/src --out examples/users/thaw_manifest.ts
// Bundle with `npm run bundle:worker`, serve with workerd (workerd/config.capnp) or Wrangler.
// workerd has no SQLite: the users are kept in memory, per isolate. It serves the OpenAPI document
// at /openapi.json, without the docs page, whose files are read from disk, and /actuator/health
// with the db indicator of the manifest (the actuator exposes health unless configured otherwise).
import { bootstrap } from "../../mod.ts";
import { actuator } from "../../actuator.ts";
import { openApi } from "../../openapi.ts";
import { MemoryUserRepository } from "./storage/memory_user_repository.ts";
import { components, controllers } from "./thaw_manifest.ts";

export default await bootstrap({
  controllers,
  components: [...components, MemoryUserRepository],
  openapi: openApi({ docs: false, title: "Users", version: "1.0.0" }),
  // /actuator/health with the `db` indicator: UP once the store's @PostConstruct has run.
  actuator: actuator(),
});
