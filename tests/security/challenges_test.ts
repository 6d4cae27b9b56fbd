// The answer to a refused request with several schemes on: one challenge per scheme, in order, a
// header whatever the realms hold, and RFC 6750's codes on the bearer challenge alone.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import type { BearerRefusal } from "../../src/security/bearer_answer.ts";
import { basicChallenge } from "../../src/security/basic_credentials.ts";
import { apiKeyChallenge, refusalResponse } from "../../src/security/challenges.ts";
import { propertyOptions } from "../property.ts";

const REFUSALS: BearerRefusal[] = [
  { kind: "missing" },
  { kind: "invalid-request" },
  { kind: "invalid-token" },
];
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

describe("refusalResponse", () => {
  it("lists the challenge of every scheme on, bearer first, whatever the realms hold", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...REFUSALS),
        fc.option(fc.string({ unit: "binary" }), { nil: undefined }),
        fc.option(fc.string({ unit: "binary" }), { nil: undefined }),
        fc.option(fc.stringMatching(TOKEN), { nil: undefined }),
        fc.boolean(),
        async (refusal, realm, basicRealm, header, bearerOn) => {
          const bearer = bearerOn || refusal.kind !== "missing";
          const others = [
            ...(basicRealm === undefined ? [] : [basicChallenge(basicRealm)]),
            ...(header === undefined ? [] : [apiKeyChallenge(header)]),
          ];
          const res = refusalResponse(refusal, { bearer, realm, others });
          const field = res.headers.get("www-authenticate") ?? "";
          assert.doesNotMatch(field, /[\r\n\0]/);
          // The quoted strings emptied first: a realm may read as a challenge's start.
          const unquoted = field.replace(/"(?:[^"\\]|\\.)*"/g, '""');
          const schemes = [...unquoted.matchAll(/(?:^|, )(Bearer|Basic|ApiKey)(?= |,|$)/g)].map((
            m,
          ) => m[1]);
          if (refusal.kind === "invalid-request") {
            assert.equal(res.status, 400);
            assert.deepEqual(schemes, ["Bearer"]);
            return;
          }
          assert.equal(res.status, 401);
          assert.deepEqual(schemes, [
            ...(bearer ? ["Bearer"] : []),
            ...(basicRealm === undefined ? [] : ["Basic"]),
            ...(header === undefined ? [] : ["ApiKey"]),
          ]);
          assert.equal(
            await res.text(),
            refusal.kind === "invalid-token" ? '{"error":"invalid_token"}' : "",
          );
        },
      ),
      propertyOptions(),
    );
  });
});
