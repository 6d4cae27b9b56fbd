// DEV ONLY. Prints a token the sample users app accepts under its dev key (the `dev` profile, the
// workers), signed with the published dev private key, valid for an hour:
//   npm run token                      # scopes users:read users:write
//   npm run token -- --admin           # and the role ADMIN, which DELETE needs
//   npm run token -- users:read        # these scopes only
// then: curl -H "Authorization: Bearer $(npm run --silent token)" localhost:8080/users
import process from "node:process";
import { devToken } from "./dev_token.ts";

const words = process.argv.slice(2);
const scopes = words.filter((word) => !word.startsWith("--"));
console.log(
  await devToken({
    scopes: scopes.length > 0 ? scopes : ["users:read", "users:write"],
    roles: words.includes("--admin") ? ["ADMIN"] : [],
  }),
);
