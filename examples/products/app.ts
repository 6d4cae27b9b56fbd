// The products app, as main.ts serves it and its tests start it: the `products` connection of
// application.yml as a SearchClient bean, its index and alias migrated before the app serves.
import { type Application, bootstrap } from "../../mod.ts";
import { loadConfig } from "../../config.ts";
import { search } from "../../search.ts";
import { Catalog } from "./src/catalog.ts";
import { ProductController } from "./src/product_controller.ts";

const here = new URL(".", import.meta.url);

/** Starts the app: migrations first (a failing file rejects, naming it), then the beans. */
export async function productsApp(
  onProgress?: (line: string) => void,
): Promise<Application> {
  return await bootstrap({
    config: await loadConfig(new URL("application.yml", here)),
    controllers: [ProductController],
    components: [Catalog],
    search: search({ migrate: new URL("migrations/", here), onProgress }),
  });
}
