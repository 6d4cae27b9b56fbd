import {
  Autowired,
  DeleteMapping,
  GetMapping,
  HttpStatus,
  PathVariable,
  PostMapping,
  PutMapping,
  RequestBody,
  RequestMapping,
  RequestParam,
  ResponseEntity,
  RestController,
} from "../../../mod.ts";
import { User } from "./user.ts";
import { DuplicateEmailError, UserService } from "./user_service.ts";

const NOT_FOUND = "User not found";

function envelope(status: HttpStatus, body: Record<string, unknown>): ResponseEntity {
  return ResponseEntity.status(status).withJson({ success: status.getValue() < 400, ...body });
}

function failure(action: string, error: unknown): ResponseEntity {
  if (error instanceof DuplicateEmailError) {
    return envelope(HttpStatus.CONFLICT, { message: "Email already exists" });
  }
  const why = error instanceof Error ? error.message : String(error);
  return envelope(HttpStatus.INTERNAL_SERVER_ERROR, {
    message: `Failed to ${action} user: ${why}`,
  });
}

/** The sample controller of seed section 4.2, with the statuses of reference-notes section 1. */
@RestController()
@RequestMapping("/users")
export class UserController {
  @Autowired(UserService)
  private users!: UserService;

  @GetMapping("")
  list(): ResponseEntity {
    return envelope(HttpStatus.OK, { data: this.users.findAll() });
  }

  // Declared before /search on purpose: a literal segment still wins.
  @GetMapping("/{id}", PathVariable("id", Number))
  get(id: number): ResponseEntity {
    const user = this.users.findById(id);
    return user === undefined
      ? envelope(HttpStatus.NOT_FOUND, { message: NOT_FOUND })
      : envelope(HttpStatus.OK, { data: user });
  }

  @GetMapping("/search", RequestParam("email"))
  search(email: string): ResponseEntity {
    const user = this.users.findByEmail(email);
    return user === undefined
      ? envelope(HttpStatus.NOT_FOUND, { message: NOT_FOUND })
      : envelope(HttpStatus.OK, { data: user });
  }

  @PostMapping("", RequestBody(User))
  create(user: User): ResponseEntity {
    if (this.users.findByEmail(user.getEmail()) !== undefined) {
      return envelope(HttpStatus.CONFLICT, { message: "Email already exists" });
    }
    try {
      const created = this.users.create(user);
      return ResponseEntity.created(`/users/${created.id}`).withJson({
        success: true,
        data: created,
        message: "User created successfully",
      });
    } catch (error) {
      return failure("create", error);
    }
  }

  @PutMapping("/{id}", PathVariable("id", Number), RequestBody(User))
  update(id: number, user: User): ResponseEntity {
    if (this.users.findById(id) === undefined) {
      return envelope(HttpStatus.NOT_FOUND, { message: NOT_FOUND });
    }
    user.setId(id);
    try {
      const updated = this.users.update(user);
      return envelope(HttpStatus.OK, { data: updated, message: "User updated successfully" });
    } catch (error) {
      return failure("update", error);
    }
  }

  @DeleteMapping("/{id}", PathVariable("id", Number))
  remove(id: number): ResponseEntity {
    try {
      return this.users.delete(id)
        ? envelope(HttpStatus.OK, { message: "User deleted successfully" })
        : envelope(HttpStatus.NOT_FOUND, { message: NOT_FOUND });
    } catch (error) {
      return failure("delete", error);
    }
  }
}
