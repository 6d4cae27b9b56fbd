/** A user record (seed 2.4). Request bodies are copied onto a new instance. */
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
