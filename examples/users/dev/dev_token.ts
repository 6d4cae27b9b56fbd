// DEV ONLY. Signs tokens with the dev issuer's private key, published here, for the sample users
// app run with its dev key (the `dev` profile, the workers): `npm run token` prints one, the tests
// send them. A real identity provider keeps its private key to itself.
import { importPKCS8, SignJWT } from "jose";
import { USERS_AUDIENCE } from "./dev_public_key.ts";

/** DEV ONLY: the private half, which signs the dev tokens. Published: it protects nothing. */
export const DEV_PRIVATE_KEY: string = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg/SNd20EEK9H9lSyK
1SG0ZvV52h8JVC3jSzT0gNE+EfmhRANCAAQCUImnXgWRwpolB7mLOx2K/Ce9ByfR
Q6XTcfIV5xl/t544b7ch+w5BunBjd46/CDgfgb0+qCYVCv7qRA2uRcx0
-----END PRIVATE KEY-----
`;

/** What a dev token says of its caller. */
export interface DevCaller {
  /** The `sub` claim: the caller's name (`dev` when left out). */
  readonly subject?: string;
  /** The `scope` claim's scopes (`users:read`, `users:write`), each the authority `SCOPE_x`. */
  readonly scopes?: readonly string[];
  /** The `roles` claim's roles (`ADMIN`), each the authority `ROLE_x`. */
  readonly roles?: readonly string[];
  /** How long it is valid (`1h` when left out), as jose reads it. */
  readonly expiresIn?: string;
}

/** DEV ONLY: a token the dev key signs, for the users app, of the caller given. */
export async function devToken(caller: DevCaller = {}): Promise<string> {
  const key = await importPKCS8(DEV_PRIVATE_KEY, "ES256");
  return await new SignJWT({
    scope: (caller.scopes ?? []).join(" "),
    roles: [...caller.roles ?? []],
  })
    .setProtectedHeader({ alg: "ES256", typ: "JWT" })
    .setSubject(caller.subject ?? "dev")
    .setAudience(USERS_AUDIENCE)
    .setIssuedAt()
    .setExpirationTime(caller.expiresIn ?? "1h")
    .sign(key);
}
