import { Component, EventListener } from "../../../mod.ts";
import { UserRegistered } from "./user_registered.ts";

/**
 * Welcomes each new user. A stand-in for a mail queue: it counts and logs. `async: true`: the
 * request that created the user does not wait for it, and a failure here is logged, not answered.
 */
@Component()
export class WelcomeMailer {
  queued = 0;

  @EventListener(UserRegistered, { async: true })
  welcome(event: UserRegistered): void {
    this.queued++;
    // The id, not the address: a log is no place for what identifies a person.
    console.info(`users: welcome mail queued for user ${event.user.id}`);
  }
}
