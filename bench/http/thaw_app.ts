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
import process from "node:process";
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

/**
 * The app; with `middleware`, `cors()` and `secureHeaders()` run around every request. The
 * environment's `THAW_BENCH_ACTUATOR` adds the actuator, for the A/B of observation's cost:
 * `health` (the actuator with nothing to report to: no tracer or meter provider registered) or
 * `prometheus` (every request recorded in the request histogram).
 */
export async function thawApp(middleware = false): Promise<Application> {
  const observe = process.env.THAW_BENCH_ACTUATOR;
  if (observe !== undefined && observe !== "health" && observe !== "prometheus") {
    throw new Error(`THAW_BENCH_ACTUATOR takes health or prometheus, got "${observe}"`);
  }
  return bootstrap({
    controllers: [UserController],
    middleware: middleware ? benchMiddleware() : [],
    ...(observe === undefined ? {} : {
      actuator: (await import("../../actuator.ts")).actuator(),
      config: { management: { endpoints: { web: { exposure: { include: observe } } } } },
    }),
  });
}

/** The app without middleware; serve.ts serves it with `listen(app)`, as a Thaw user does. */
export const app: Application = await thawApp();
