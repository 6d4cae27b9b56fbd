// The products, kept in the search cluster: written and read through the alias `products`, never
// through an index name, so that a reindex migration can move the alias to a new index at deploy
// time while this app runs.
import { errors } from "@opensearch-project/opensearch";
import { Autowired, Service } from "../../../mod.ts";
import { SearchClient } from "../../../search.ts";

/** A product as the API takes it. */
export interface ProductInput {
  readonly name: string;
  readonly price: number;
}

/** A product as the API answers it. */
export interface Product extends ProductInput {
  readonly id: string;
}

const ALIAS = "products";

/** The catalog over the `products` connection's client (the only one, so the primary). */
@Service()
export class Catalog {
  @Autowired(SearchClient)
  private search!: SearchClient;

  /** Stores `product` under `id`, visible to the next search. */
  async save(id: string, product: ProductInput): Promise<void> {
    // While a reindex blocks the old index for its last catch-up, a write through the alias is
    // refused with 403 cluster_block_exception; sent again, it lands in the new index.
    for (let attempt = 1;; attempt++) {
      try {
        await this.search.index({ index: ALIAS, id, body: product, refresh: "wait_for" });
        return;
      } catch (error) {
        if (!blocked(error) || attempt === 50) throw error;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  }

  /** The product `id`, or undefined. */
  async find(id: string): Promise<Product | undefined> {
    const found = await this.search.get({ index: ALIAS, id }, { ignore: [404] });
    return found.body.found ? { id, ...found.body._source as ProductInput } : undefined;
  }

  /** The products whose name matches `text`, best first. */
  async match(text: string): Promise<Product[]> {
    const found = await this.search.search({
      index: ALIAS,
      body: { query: { match: { name: text } }, size: 20 },
    });
    return found.body.hits.hits.map((hit) => ({
      id: hit._id as string,
      ...hit._source as ProductInput,
    }));
  }
}

function blocked(error: unknown): boolean {
  return error instanceof errors.ResponseError && error.statusCode === 403 &&
    JSON.stringify(error.body).includes("cluster_block_exception");
}
