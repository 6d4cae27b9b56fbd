import { z } from "zod";
import {
  Autowired,
  GetMapping,
  HttpStatus,
  PathVariable,
  PutMapping,
  RequestBody,
  RequestMapping,
  RequestParam,
  ResponseEntity,
  RestController,
} from "../../../mod.ts";
import { Catalog } from "./catalog.ts";

const ProductInput = z.object({ name: z.string().min(1), price: z.number().nonnegative() });

/** The products API: store one under its id, read it back, search by name. */
@RestController()
@RequestMapping("/products")
export class ProductController {
  @Autowired(Catalog)
  private catalog!: Catalog;

  @PutMapping("/{id}", PathVariable("id"), RequestBody(ProductInput))
  async save(id: string, input: z.infer<typeof ProductInput>): Promise<ResponseEntity> {
    await this.catalog.save(id, input);
    return ResponseEntity.status(HttpStatus.OK).withJson({ id, ...input });
  }

  @GetMapping("/{id}", PathVariable("id"))
  async get(id: string): Promise<ResponseEntity> {
    const product = await this.catalog.find(id);
    return product === undefined
      ? ResponseEntity.status(HttpStatus.NOT_FOUND).withJson({ message: "no such product" })
      : ResponseEntity.ok().withJson(product);
  }

  @GetMapping("", RequestParam("q"))
  async search(q: string) {
    return await this.catalog.match(q);
  }
}
