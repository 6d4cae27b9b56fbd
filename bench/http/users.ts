// The one route every server of the HTTP benchmark answers, whatever framework serves it.

/** The small JSON user `GET /users/{id}` answers. */
export function user(id: number): { id: number; name: string; email: string } {
  return { id, name: "Ada Lovelace", email: "ada@example.com" };
}

/** The body `POST /users` sends; the answer is this object with `id: 1` added. */
export const NEW_USER = { name: "Ada Lovelace", email: "ada@example.com" };

const NEW_USER_JSON = JSON.stringify(NEW_USER);

/** `GET /users/42` as a server hands it to `app.fetch`, for the in-process benchmarks. */
export function getRequest(): Request {
  return new Request("http://localhost/users/42");
}

/** `POST /users` as a server hands it to `app.fetch`: over HTTP/1.1 a body comes with its length. */
export function postRequest(): Request {
  return new Request("http://localhost/users", {
    method: "POST",
    body: NEW_USER_JSON,
    headers: {
      "content-type": "application/json",
      "content-length": String(NEW_USER_JSON.length),
    },
  });
}
