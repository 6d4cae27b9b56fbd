// The smallest app of the package's own example (mod.ts): one controller, one service.
import { Autowired, GetMapping, PathVariable, RestController } from "../../mod.ts";
import { Greeter } from "./greeter.ts";

/** `GET /hello/{name}`, answered by the `Greeter` bean. */
@RestController()
export class GreetingController {
  @Autowired(Greeter)
  private greeter!: Greeter;

  @GetMapping("/hello/{name}", PathVariable("name"))
  hello(name: string): { message: string } {
    return { message: this.greeter.greet(name) };
  }
}
