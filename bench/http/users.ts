// The one route every server of the HTTP benchmark answers, whatever framework serves it.

/** The small JSON user `GET /users/{id}` answers. */
export function user(id: number): { id: number; name: string; email: string } {
  return { id, name: "Ada Lovelace", email: "ada@example.com" };
}

/** The body `POST /users` sends; the answer is this object with `id: 1` added. */
export const NEW_USER = { name: "Ada Lovelace", email: "ada@example.com" };
