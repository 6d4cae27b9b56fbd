// The sample users app on workerd / Cloudflare Workers, where there is no file system to scan:
// the bean classes come from the generated manifest. Regenerate it after adding a bean class:
//   deno run -A cli.ts manifest examples/users/src --out examples/users/thaw_manifest.ts
// Bundle with `npm run bundle:worker`, serve with workerd (workerd/config.capnp) or Wrangler.
import { bootstrap } from "../../mod.ts";
import { components, controllers } from "./thaw_manifest.ts";

export default await bootstrap({ controllers, components });
