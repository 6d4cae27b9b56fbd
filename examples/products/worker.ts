// The products search on workerd / Cloudflare Workers: the same Catalog over the same bean, the
// connection given as an object (a worker has no application.yml) from the worker's bindings, the
// app started at the first request (a worker does no I/O at global scope). Bundle with Wrangler
// and nodejs_compat; migrate from a machine (`npx thaw -m search`), not from the worker.
import { type Application, bootstrap } from "../../mod.ts";
import { search } from "../../search.ts";
import { Catalog } from "./src/catalog.ts";
import { ProductController } from "./src/product_controller.ts";

/** The worker's bindings: the cluster's URL, and a token where it takes one. */
export interface Env {
  readonly OPENSEARCH_URL: string;
  readonly OPENSEARCH_TOKEN?: string;
}

let app: Promise<Application> | undefined;

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    app ??= bootstrap({
      config: {
        search: [{
          name: "products",
          hosts: env.OPENSEARCH_URL,
          ...(env.OPENSEARCH_TOKEN ? { bearer_token: env.OPENSEARCH_TOKEN } : {}),
        }],
      },
      controllers: [ProductController],
      components: [Catalog],
      search: search(),
    });
    return await (await app).fetch(request);
  },
};
