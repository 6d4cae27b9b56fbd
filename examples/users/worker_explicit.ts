// The sample users app on workerd / Cloudflare Workers with the bean classes listed by hand: no
// generated file, at the cost of keeping the list up to date. The users are kept in memory. Its
// routes need a bearer token, checked against the dev key (DEV ONLY), as worker.ts's do.
import { bootstrap } from "../../mod.ts";
import { security } from "../../security.ts";
import { DEV_OAUTH2 } from "./dev/dev_public_key.ts";
import { UserController } from "./src/user_controller.ts";
import { UserService } from "./src/user_service.ts";
import { WelcomeMailer } from "./src/welcome_mailer.ts";
import { MemoryUserRepository } from "./storage/memory_user_repository.ts";

export default await bootstrap({
  controllers: [UserController],
  components: [UserService, WelcomeMailer, MemoryUserRepository],
  config: {
    security: {
      oauth2: DEV_OAUTH2,
    },
  },
  security: security(),
});
