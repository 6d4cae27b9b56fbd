import { z } from "zod";

/** A user as the API answers with it. */
export class User {
  id = 0;
  name = "";
  email = "";

  setId(id: number): void {
    this.id = id;
  }

  getEmail(): string {
    return this.email;
  }
}

const NAME_MAX = 100;

/**
 * A name as sent: not blank, and at most {@linkcode NAME_MAX} characters counted as the document's
 * `maxLength` counts them, by code point (zod's `max` counts UTF-16 units: an emoji would count
 * twice). Both are checked before the trim, on the text the document describes, so a padded name
 * passes here exactly when it passes the document; `\S` finds what `trim` would leave.
 */
const Name = z.string()
  .regex(/\S/, { error: "Must not be blank" })
  .refine((name) => [...name].length <= NAME_MAX, {
    error: `Too big: expected at most ${NAME_MAX} characters`,
  })
  // The refinement has no JSON Schema form: the document is told what it checks.
  .meta({ maxLength: NAME_MAX })
  .trim();

/**
 * The body of `POST /users` and `PUT /users/{id}`, checked before the handler runs: anything else
 * is a 400 listing the issues. Other keys (an `id`) are dropped; the name is trimmed.
 */
export const UserInput = z.object({
  name: Name,
  email: z.email().max(254),
}).meta({ title: "UserInput", description: "A user's name and email address" });

/** What {@linkcode UserInput} lets through. */
export type UserInput = z.infer<typeof UserInput>;

/** A stored user, as every answer carries it. */
export const UserRecord = z.object({
  id: z.number().int().positive(),
  name: z.string(),
  email: z.string(),
}).meta({ title: "User" });
