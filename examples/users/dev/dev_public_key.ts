// DEV ONLY. The public key of the sample users app's dev issuer (its private half, in dev_token.ts,
// is published: anyone can sign a token this key accepts). The `dev` profile (application-dev.yml)
// and the workers trust it so that the app runs, secured, with no identity provider to set up. A
// real deployment trusts its identity provider instead (`issuer-uri`), and never this key.

/** The public half, as application-dev.yml gives it (`security.oauth2.resourceserver.jwt.public-key`). */
export const DEV_PUBLIC_KEY: string = `-----BEGIN PUBLIC KEY-----
MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEAlCJp14FkcKaJQe5izsdivwnvQcn
0UOl03HyFecZf7eeOG+3IfsOQbpwY3eOvwg4H4G9PqgmFQr+6kQNrkXMdA==
-----END PUBLIC KEY-----
`;

/** The audience the users app asks of a token (`security.oauth2.resourceserver.jwt.audiences`). */
export const USERS_AUDIENCE = "users";

/**
 * The resource server's settings the workers give (`security.oauth2`), as application-dev.yml
 * gives them: the dev key, the users audience, roles from the `roles` claim.
 */
export const DEV_OAUTH2 = {
  resourceserver: {
    jwt: { "public-key": DEV_PUBLIC_KEY, audiences: [USERS_AUDIENCE], "roles-claim-name": "roles" },
  },
} as const;
