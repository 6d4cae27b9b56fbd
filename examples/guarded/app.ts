import type { Context, Next } from "hono";
import { cors } from "hono/cors";
import {
  Autowired,
  bootstrap,
  Component,
  ControllerAdvice,
  ExceptionHandler,
  GetMapping,
  type Middleware,
  PathVariable,
  PostMapping,
  ResponseEntity,
  RestController,
  UseMiddleware,
} from "../../mod.ts";

class InsufficientFunds extends Error {}

@Component()
class TokenStore {
  #owners = new Map([["s3cret", "ada"]]);
  ownerOf(token: string): string | undefined {
    return this.#owners.get(token);
  }
}

@Component()
class BearerGuard implements Middleware {
  @Autowired(TokenStore)
  private tokens!: TokenStore;

  async handle(c: Context, next: Next): Promise<Response | void> {
    const token = /^Bearer (.+)$/.exec(c.req.header("authorization") ?? "")?.[1];
    if (token === undefined || this.tokens.ownerOf(token) === undefined) {
      return c.json({ error: "a valid bearer token is needed" }, 401, {
        "WWW-Authenticate": "Bearer",
      });
    }
    await next();
  }
}

@RestController()
class StatusController {
  @GetMapping("/status")
  status(): { up: boolean } {
    return { up: true };
  }
}

@RestController()
@UseMiddleware(BearerGuard)
class AccountController {
  @PostMapping("/accounts/{id}/withdraw", PathVariable("id", Number))
  withdraw(id: number): never {
    throw new InsufficientFunds(`account ${id} cannot cover it`);
  }
}

@ControllerAdvice()
class Problems {
  @ExceptionHandler(InsufficientFunds)
  insufficient(error: InsufficientFunds): ResponseEntity {
    return ResponseEntity.status(422).withJson({ problem: error.message });
  }
}

export const app = await bootstrap({
  controllers: [StatusController, AccountController],
  components: [TokenStore, BearerGuard, Problems],
  middleware: [cors({ origin: "https://app.example.com" })],
});
