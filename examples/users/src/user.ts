import { z } from "zod";

/** A user as the API answers with it (seed 2.4). */
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

/**
 * The body of `POST /users` and `PUT /users/{id}`, checked before the handler runs: anything else
 * is a 400 listing the issues. Other keys (an `id`) are dropped; the name is trimmed.
 */
export const UserInput = z.object({
  name: z.string().trim().min(1).max(100),
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
