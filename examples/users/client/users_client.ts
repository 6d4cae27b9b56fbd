// A typed client of the sample users app: openapi-fetch over the types openapi-typescript wrote
// from the app's own document (users_api.ts). Regenerate them after changing a route:
//   npm start &   # or any way of serving the app
//   npx openapi-typescript http://localhost:8080/openapi.json -o examples/users/client/users_api.ts
// tests/examples/users_client_test.ts checks the file matches what the served document gives.
import createClient, { type Client } from "openapi-fetch";
import type { paths } from "./users_api.ts";

/**
 * The users API at `baseUrl` (`http://localhost:8080`), every path, parameter and body typed,
 * called with the bearer `token` (the app needs one: `npm run token` prints a dev one).
 */
export function usersClient(baseUrl: string, token: string): Client<paths> {
  return createClient<paths>({ baseUrl, headers: { authorization: `Bearer ${token}` } });
}
