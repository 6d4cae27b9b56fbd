import { Autowired, type HealthCheck, HealthIndicator } from "../../../mod.ts";
import { UserRepository } from "./user_repository.ts";

/**
 * The `db` component of `/actuator/health`: UP while the repository answers a trivial query, DOWN
 * with the storage's reason when it does not (`database is not open` once SQLite is closed), so
 * that a probe stops sending requests that could only fail. The reason is in the body with
 * `show-details: always`; with `never` (the app's default) the status alone is.
 */
@HealthIndicator("db")
export class DatabaseHealth implements HealthCheck {
  @Autowired(UserRepository)
  private repository!: UserRepository;

  async check(): Promise<void> {
    await this.repository.ping();
  }
}
