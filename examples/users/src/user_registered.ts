import type { User } from "./user.ts";

/** Published by `UserService.create` once a user is stored. */
export class UserRegistered {
  constructor(readonly user: User) {}
}
