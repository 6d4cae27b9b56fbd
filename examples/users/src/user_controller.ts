import { z } from "zod";
import {
  ApiOperation,
  ApiResponse,
  ApiTags,
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
import { Secured } from "../../../security.ts";
import { UserInput, UserRecord } from "./user.ts";
import { DuplicateEmailError } from "./user_repository.ts";
import { UserService } from "./user_service.ts";

const NOT_FOUND = "User not found";

// The envelopes the answers come in, for the OpenAPI document.
const Found = z.object({ success: z.literal(true), data: UserRecord });
const Listed = z.object({ success: z.literal(true), data: z.array(UserRecord) });
const Saved = Found.extend({ message: z.string() });
const Done = z.object({ success: z.literal(true), message: z.string() });
const Failed = z.object({ success: z.literal(false), message: z.string() });
const notFound = ApiResponse(404, { description: "No user has this id", schema: Failed });
const taken = ApiResponse(409, { description: "Another user has this email", schema: Failed });
// A caught failure answers the envelope: its message is the failure text and the cause's.
const storageFailed = ApiResponse(500, {
  description: "The storage failed: the failure text and the exception's message",
  schema: Failed,
});

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

/**
 * The users API: create, read, search, update and delete, each answering the usual statuses.
 * Bodies are checked by the `UserInput` schema before a handler runs: a body it refuses is a 400
 * whose `issues` say what is wrong, and nothing is stored. Every route needs a bearer token
 * (`security()`): reading needs the scope `users:read` (the class's), changing `users:write`,
 * and deleting the role `ADMIN`.
 */
@RestController()
@RequestMapping("/users")
@ApiTags("users")
@Secured("SCOPE_users:read")
export class UserController {
  @Autowired(UserService)
  private users!: UserService;

  @ApiOperation({ summary: "List every user" })
  @ApiResponse(200, { description: "The users, oldest first", schema: Listed })
  @GetMapping("")
  async list(): Promise<ResponseEntity> {
    return envelope(HttpStatus.OK, { data: await this.users.findAll() });
  }

  // Declared before /search on purpose: a literal segment still wins.
  @ApiOperation({ summary: "Find a user by id" })
  @ApiResponse(200, { description: "The user", schema: Found })
  @notFound
  @GetMapping("/{id}", PathVariable("id", Number))
  async get(id: number): Promise<ResponseEntity> {
    const user = await this.users.findById(id);
    return user === undefined
      ? envelope(HttpStatus.NOT_FOUND, { message: NOT_FOUND })
      : envelope(HttpStatus.OK, { data: user });
  }

  @ApiOperation({ summary: "Find a user by email" })
  @ApiResponse(200, { description: "The user", schema: Found })
  @ApiResponse(404, { description: "No user has this email", schema: Failed })
  @GetMapping("/search", RequestParam("email"))
  async search(email: string): Promise<ResponseEntity> {
    const user = await this.users.findByEmail(email);
    return user === undefined
      ? envelope(HttpStatus.NOT_FOUND, { message: NOT_FOUND })
      : envelope(HttpStatus.OK, { data: user });
  }

  @ApiOperation({ summary: "Create a user", description: "`Location` names the new user." })
  @ApiResponse(201, { description: "Created", schema: Saved })
  @taken
  @storageFailed
  @PostMapping("", RequestBody(UserInput))
  @Secured("SCOPE_users:write")
  async create(input: UserInput): Promise<ResponseEntity> {
    try {
      const created = await this.users.create(input);
      return ResponseEntity.created(`/users/${created.id}`).withJson({
        success: true,
        data: created,
        message: "User created successfully",
      });
    } catch (error) {
      return failure("create", error);
    }
  }

  // The id is the path's: an `id` in the body is dropped by the schema.
  @ApiOperation({ summary: "Replace a user's name and email" })
  @ApiResponse(200, { description: "Updated", schema: Saved })
  @notFound
  @taken
  @storageFailed
  @PutMapping("/{id}", PathVariable("id", Number), RequestBody(UserInput))
  @Secured("SCOPE_users:write")
  async update(id: number, input: UserInput): Promise<ResponseEntity> {
    try {
      const updated = await this.users.update(id, input);
      return updated === undefined
        ? envelope(HttpStatus.NOT_FOUND, { message: NOT_FOUND })
        : envelope(HttpStatus.OK, { data: updated, message: "User updated successfully" });
    } catch (error) {
      return failure("update", error);
    }
  }

  @ApiOperation({ summary: "Delete a user" })
  @ApiResponse(200, { description: "Deleted", schema: Done })
  @notFound
  @storageFailed
  @DeleteMapping("/{id}", PathVariable("id", Number))
  @Secured("ROLE_ADMIN")
  async remove(id: number): Promise<ResponseEntity> {
    try {
      return await this.users.delete(id)
        ? envelope(HttpStatus.OK, { message: "User deleted successfully" })
        : envelope(HttpStatus.NOT_FOUND, { message: NOT_FOUND });
    } catch (error) {
      return failure("delete", error);
    }
  }
}
