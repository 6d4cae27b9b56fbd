// The guard-bypass suite (tests/security/guard_bypass_cases.ts) over real HTTP through
// listen(app), on whichever runtime runs it; tests/edge/workerd_guard_bypass_test.ts runs the same
// tries against the same app on workerd.
import { bootstrap } from "../../mod.ts";
import { listen } from "../../server.ts";
import { RUNTIME } from "../runtime.ts";
import { memoryLogger } from "../helpers.ts";
import { guardedApp } from "../fixtures/guarded_app.ts";
import { guardBypassSuite } from "./guard_bypass_cases.ts";

guardBypassSuite(
  `security() against guard bypasses through listen(app) on ${RUNTIME}`,
  async (issuer) => {
    const app = await bootstrap({ ...guardedApp(issuer.url), logger: memoryLogger() });
    return await listen(app, { port: 0, hostname: "127.0.0.1" });
  },
);
