// (a) Thaw: the route as a user writes it, a controller compiled by the container.
import {
  type Application,
  bootstrap,
  GetMapping,
  PathVariable,
  PostMapping,
  RequestBody,
  RestController,
} from "../../mod.ts";
import { benchMiddleware } from "./middleware.ts";
import { user } from "./users.ts";

/** The controller, for the benchmarks that bootstrap it their own way. */
@RestController()
export class UserController {
  @GetMapping("/users/{id}", PathVariable("id", Number))
  get(id: number) {
    return user(id);
  }

  @PostMapping("/users", RequestBody())
  create(body: unknown) {
    return { ...(body as Record<string, unknown>), id: 1 };
  }
}

/** The app; with `middleware`, `cors()` and `secureHeaders()` run around every request. */
export function thawApp(middleware = false): Promise<Application> {
  return bootstrap({
    controllers: [UserController],
    middleware: middleware ? benchMiddleware() : [],
  });
}

/** The app without middleware; serve.ts serves it with `listen(app)`, as a Thaw user does. */
export const app: Application = await thawApp();
