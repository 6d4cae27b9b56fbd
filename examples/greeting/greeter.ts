import { Service } from "../../mod.ts";

/** The service the controller is wired to. */
@Service()
export class Greeter {
  greet(name: string): string {
    return `Hello, ${name}!`;
  }
}
