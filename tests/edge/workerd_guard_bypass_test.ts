// The guard-bypass suite (tests/security/guard_bypass_cases.ts) against the same app served by
// real workerd: its HTTP layer parses the raw requests, and the worker's verifier fetches the
// issuer's discovery document and key set through workerd's fetch.
import { fileURLToPath } from "node:url";
import { serveWorker } from "./workerd.ts";
import { guardBypassSuite } from "../security/guard_bypass_cases.ts";

const WORKER = fileURLToPath(new URL("../fixtures/guarded_edge.ts", import.meta.url));

guardBypassSuite("security() against guard bypasses on workerd", async (issuer) => {
  const worker = await serveWorker(WORKER, "guarded_edge", {
    flags: ["nodejs_als"],
    loopbackOutbound: true,
    bindings: { ISSUER: issuer.url },
    readyPath: "/runs",
  });
  return { port: Number(new URL(worker.origin).port), close: () => worker.close() };
});
