// The plan of an object's answer: RFC 9110's rules one example each, then properties against a
// reference model that knows what each generated header means because it built it, rather than
// by parsing it again, and properties over arbitrary header values.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  planResponse,
  type RequestConditions,
  responseHeaders,
  type ResponsePlan,
} from "../../src/storage/object_response.ts";
import type { ObjectInfo } from "../../src/storage/storage_driver.ts";
import { propertyOptions } from "../property.ts";

type PlanInfo = Pick<ObjectInfo, "size" | "etag" | "lastModified">;

const NOW = new Date("2026-06-15T12:00:00Z");
const LAST_MODIFIED = new Date("2026-01-02T03:04:05.678Z");
const LM = "Fri, 02 Jan 2026 03:04:05 GMT";
const INFO: PlanInfo = { size: 100, etag: '"v1"', lastModified: LAST_MODIFIED };

function plan(
  conditions: Partial<RequestConditions>,
  info: PlanInfo = INFO,
): ResponsePlan {
  return planResponse(info, { method: "GET", ...conditions }, NOW);
}

function partial(offset: number, length: number): ResponsePlan {
  return { status: 206, range: { offset, length } };
}

describe("planResponse: methods (RFC 9110 §9.3.1, §9.3.2, §15.5.6)", () => {
  it("serves GET and HEAD whole with no condition", () => {
    assert.deepEqual(plan({}), { status: 200 });
    assert.deepEqual(plan({ method: "HEAD" }), { status: 200 });
  });

  it("answers 405 to any other method, before any condition (§13.2.1)", () => {
    for (const method of ["POST", "PUT", "DELETE", "OPTIONS", "get", ""]) {
      assert.deepEqual(plan({ method, ifMatch: '"other"', range: "bytes=0-1" }), { status: 405 });
    }
  });
});

describe("planResponse: If-Match (RFC 9110 §13.1.1)", () => {
  it("passes on a strong match, fails with 412 on none", () => {
    assert.deepEqual(plan({ ifMatch: '"v1"' }), { status: 200 });
    assert.deepEqual(plan({ ifMatch: '"v2"' }), { status: 412 });
  });

  it("matches any existing object with *", () => {
    assert.deepEqual(plan({ ifMatch: "*" }), { status: 200 });
  });

  it("reads a list, with whitespace and empty members around its commas (§5.6.1)", () => {
    assert.deepEqual(plan({ ifMatch: ' "a" ,\t"v1" ' }), { status: 200 });
    assert.deepEqual(plan({ ifMatch: ', ,"a",,"v1",' }), { status: 200 });
    assert.deepEqual(plan({ ifMatch: '"a", "b"' }), { status: 412 });
  });

  it("compares strongly: a weak tag never matches (§8.8.3.2)", () => {
    assert.deepEqual(plan({ ifMatch: 'W/"v1"' }), { status: 412 });
  });

  it("reads a comma inside a tag's quotes as part of the tag", () => {
    const info = { ...INFO, etag: '"a,b"' };
    assert.deepEqual(plan({ ifMatch: '"a,b"' }, info), { status: 200 });
    assert.deepEqual(plan({ ifMatch: '"a"' }, info), { status: 412 });
  });

  it("reads a list only up to its first malformed member", () => {
    assert.deepEqual(plan({ ifMatch: '"v1", junk' }), { status: 200 });
    assert.deepEqual(plan({ ifMatch: 'junk, "v1"' }), { status: 412 });
    assert.deepEqual(plan({ ifMatch: '"a" "v1"' }), { status: 412 });
    assert.deepEqual(plan({ ifMatch: '"v1' }), { status: 412 });
  });

  it("takes an empty or blank value as no header", () => {
    assert.deepEqual(plan({ ifMatch: "" }), { status: 200 });
    assert.deepEqual(plan({ ifMatch: " \t" }), { status: 200 });
    assert.deepEqual(plan({ ifMatch: null }), { status: 200 });
  });

  it("is evaluated first: its 412 wins over If-None-Match's 304 (§13.2.2)", () => {
    assert.deepEqual(plan({ ifMatch: '"v2"', ifNoneMatch: '"v1"' }), { status: 412 });
  });

  it("when present, leaves If-Unmodified-Since unread (§13.1.4, §13.2.2 step 2)", () => {
    const before = "Thu, 01 Jan 2026 00:00:00 GMT";
    assert.deepEqual(plan({ ifMatch: '"v1"', ifUnmodifiedSince: before }), { status: 200 });
    assert.deepEqual(plan({ ifUnmodifiedSince: before }), { status: 412 });
  });
});

describe("planResponse: If-Unmodified-Since (RFC 9110 §13.1.4)", () => {
  it("fails with 412 when the object was written after the date", () => {
    assert.deepEqual(plan({ ifUnmodifiedSince: "Fri, 02 Jan 2026 03:04:04 GMT" }), {
      status: 412,
    });
  });

  it("passes at the same second (Last-Modified has no milliseconds) and after", () => {
    assert.deepEqual(plan({ ifUnmodifiedSince: LM }), { status: 200 });
    assert.deepEqual(plan({ ifUnmodifiedSince: "Sat, 03 Jan 2026 00:00:00 GMT" }), {
      status: 200,
    });
  });

  it("is ignored when it is no HTTP-date", () => {
    for (const value of ["yesterday", "2020-01-01T00:00:00Z", "Thu, 01 Jan 2026 00:00:00 UTC"]) {
      assert.deepEqual(plan({ ifUnmodifiedSince: value }), { status: 200 }, value);
    }
  });
});

describe("planResponse: If-None-Match (RFC 9110 §13.1.2)", () => {
  it("answers 304 to GET and HEAD when a tag matches", () => {
    assert.deepEqual(plan({ ifNoneMatch: '"v1"' }), { status: 304 });
    assert.deepEqual(plan({ method: "HEAD", ifNoneMatch: '"v1"' }), { status: 304 });
  });

  it("compares weakly: W/ matches the strong tag (§8.8.3.2)", () => {
    assert.deepEqual(plan({ ifNoneMatch: 'W/"v1"' }), { status: 304 });
  });

  it("answers 304 to * and to a list holding the tag, and serves otherwise", () => {
    assert.deepEqual(plan({ ifNoneMatch: "*" }), { status: 304 });
    assert.deepEqual(plan({ ifNoneMatch: '"a", W/"v1"' }), { status: 304 });
    assert.deepEqual(plan({ ifNoneMatch: '"a", "b"' }), { status: 200 });
  });

  it("when present, leaves If-Modified-Since unread (§13.1.3)", () => {
    assert.deepEqual(plan({ ifNoneMatch: '"a"', ifModifiedSince: LM }), { status: 200 });
  });

  it("is evaluated before Range (§13.2.2 step 3)", () => {
    assert.deepEqual(plan({ ifNoneMatch: '"v1"', range: "bytes=0-1" }), { status: 304 });
  });
});

describe("planResponse: If-Modified-Since (RFC 9110 §13.1.3)", () => {
  it("answers 304 when not written since, to the second", () => {
    assert.deepEqual(plan({ ifModifiedSince: LM }), { status: 304 });
    assert.deepEqual(plan({ ifModifiedSince: "Mon, 05 Jan 2026 00:00:00 GMT" }), { status: 304 });
    assert.deepEqual(plan({ ifModifiedSince: "Fri, 02 Jan 2026 03:04:04 GMT" }), { status: 200 });
  });

  it("applies to HEAD as to GET", () => {
    assert.deepEqual(plan({ method: "HEAD", ifModifiedSince: LM }), { status: 304 });
  });

  it("is ignored when later than the server's clock", () => {
    assert.deepEqual(plan({ ifModifiedSince: "Tue, 16 Jun 2026 00:00:00 GMT" }), { status: 200 });
  });

  it("reads the obsolete RFC 850 and asctime forms (§5.6.7)", () => {
    assert.deepEqual(plan({ ifModifiedSince: "Friday, 02-Jan-26 03:04:05 GMT" }), { status: 304 });
    assert.deepEqual(plan({ ifModifiedSince: "Fri Jan  2 03:04:05 2026" }), { status: 304 });
    assert.deepEqual(plan({ ifModifiedSince: "Fri Jan 02 03:04:05 2026" }), { status: 304 });
  });

  it("takes an RFC 850 year as the latest at most 50 years ahead (§5.6.7)", () => {
    // '94 is 1994, not 2094: the object was written after it.
    assert.deepEqual(plan({ ifUnmodifiedSince: "Sunday, 06-Nov-94 08:49:37 GMT" }), {
      status: 412,
    });
    // '76 is 2076, 50 years ahead: after the write (and so no 412); '77 is 1977.
    assert.deepEqual(plan({ ifUnmodifiedSince: "Wednesday, 01-Jan-76 00:00:00 GMT" }), {
      status: 200,
    });
    assert.deepEqual(plan({ ifUnmodifiedSince: "Saturday, 01-Jan-77 00:00:00 GMT" }), {
      status: 412,
    });
  });

  it("ignores what is no HTTP-date: other forms, wrong case, impossible dates, two dates", () => {
    for (
      const value of [
        "2026-01-05T00:00:00Z",
        "Mon, 05 jan 2026 00:00:00 GMT",
        "Mon, 05 Jan 2026 00:00:00 gmt",
        "Mon, 30 Feb 2026 00:00:00 GMT",
        "Mon, 05 Jan 2026 24:00:00 GMT",
        "Mon, 5 Jan 2026 00:00:00 GMT",
        `${LM}, ${LM}`,
        "\u0000\uffff",
      ]
    ) {
      assert.deepEqual(plan({ ifModifiedSince: value }), { status: 200 }, value);
    }
  });

  it("accepts 29 February in a leap year only", () => {
    // Read as a date (even rolled over to 1 March), each would be before the write: 412.
    assert.deepEqual(plan({ ifUnmodifiedSince: "Tue, 29 Feb 2000 00:00:00 GMT" }), {
      status: 412,
    });
    assert.deepEqual(plan({ ifUnmodifiedSince: "Thu, 29 Feb 1900 00:00:00 GMT" }), {
      status: 200,
    });
    assert.deepEqual(plan({ ifUnmodifiedSince: "Tue, 29 Feb 2022 00:00:00 GMT" }), {
      status: 200,
    });
  });
});

describe("planResponse: Range (RFC 9110 §14.1.2, §14.2)", () => {
  it("serves the three forms of a single range with 206", () => {
    assert.deepEqual(plan({ range: "bytes=0-9" }), partial(0, 10));
    assert.deepEqual(plan({ range: "bytes=90-" }), partial(90, 10));
    assert.deepEqual(plan({ range: "bytes=-10" }), partial(90, 10));
    assert.deepEqual(plan({ range: "bytes=99-99" }), partial(99, 1));
  });

  it("clamps a last-pos past the end, and a suffix longer than the object (§14.1.2)", () => {
    assert.deepEqual(plan({ range: "bytes=95-1000" }), partial(95, 5));
    assert.deepEqual(plan({ range: "bytes=-1000" }), partial(0, 100));
  });

  it("reads the unit in any case (§14.1), and empty list members", () => {
    assert.deepEqual(plan({ range: "Bytes=0-0" }), partial(0, 1));
    assert.deepEqual(plan({ range: "BYTES=0-0, ," }), partial(0, 1));
  });

  it("ignores Range on HEAD: it is defined for GET alone (§14.2)", () => {
    assert.deepEqual(plan({ method: "HEAD", range: "bytes=0-9" }), { status: 200 });
    assert.deepEqual(plan({ method: "HEAD", range: "bytes=500-" }), { status: 200 });
  });

  it("serves several ranges whole: no multipart/byteranges (§14.2 lets Range be ignored)", () => {
    assert.deepEqual(plan({ range: "bytes=0-1,5-6" }), { status: 200 });
    assert.deepEqual(plan({ range: "bytes=500-600, 700-800" }), { status: 200 });
  });

  it("ignores an invalid or unknown range (§14.2), last-pos before first-pos included", () => {
    for (
      const range of [
        "bytes=5-3",
        "items=0-1",
        "bytes 0-1",
        "bytes=",
        "bytes=-",
        "bytes=abc",
        "bytes=0-1-2",
        "bytes=+1-2",
        "bytes=1 - 2",
        "bytes=0x1-2",
        "bytes=\u0661-\u0662",
      ]
    ) {
      assert.deepEqual(plan({ range }), { status: 200 }, range);
    }
  });

  it("answers 416 to a well-formed range past the end, or a suffix of 0 (§14.1.1)", () => {
    assert.deepEqual(plan({ range: "bytes=100-" }), { status: 416 });
    assert.deepEqual(plan({ range: "bytes=100-200" }), { status: 416 });
    assert.deepEqual(plan({ range: "bytes=-0" }), { status: 416 });
  });

  it("on an empty object: 416 for an int-range, the whole for a non-zero suffix (§14.1.1)", () => {
    const empty = { ...INFO, size: 0 };
    assert.deepEqual(plan({ range: "bytes=0-" }, empty), { status: 416 });
    assert.deepEqual(plan({ range: "bytes=0-0" }, empty), { status: 416 });
    assert.deepEqual(plan({ range: "bytes=-0" }, empty), { status: 416 });
    assert.deepEqual(plan({ range: "bytes=-5" }, empty), { status: 200 });
  });

  it("compares positions past 2^53 exactly", () => {
    assert.deepEqual(plan({ range: "bytes=99999999999999999999-" }), { status: 416 });
    assert.deepEqual(plan({ range: `bytes=${"9".repeat(1000)}-` }), { status: 416 });
    assert.deepEqual(plan({ range: "bytes=0-99999999999999999999" }), partial(0, 100));
    assert.deepEqual(plan({ range: "bytes=-99999999999999999999" }), partial(0, 100));
    // Both round to 2^53 as numbers, yet last-pos is before first-pos: invalid, not past the end.
    assert.deepEqual(plan({ range: "bytes=9007199254740993-9007199254740992" }), { status: 200 });
    assert.deepEqual(plan({ range: "bytes=0000000000000000000005-9" }), partial(5, 5));
  });

  it("reaches a range at the end of the largest safe size", () => {
    const huge = { ...INFO, size: Number.MAX_SAFE_INTEGER };
    assert.deepEqual(
      plan({ range: "bytes=-2" }, huge),
      partial(Number.MAX_SAFE_INTEGER - 2, 2),
    );
    assert.deepEqual(plan({ range: `bytes=${Number.MAX_SAFE_INTEGER}-` }, huge), { status: 416 });
  });

  it("comes after the preconditions (§13.2.2 step 5)", () => {
    assert.deepEqual(plan({ ifMatch: '"v2"', range: "bytes=0-1" }), { status: 412 });
    assert.deepEqual(plan({ ifModifiedSince: LM, range: "bytes=0-1" }), { status: 304 });
  });
});

describe("planResponse: If-Range (RFC 9110 §13.1.5)", () => {
  it("applies Range when the entity tag matches strongly, and serves whole when not", () => {
    assert.deepEqual(plan({ range: "bytes=0-9", ifRange: '"v1"' }), partial(0, 10));
    assert.deepEqual(plan({ range: "bytes=0-9", ifRange: '"v2"' }), { status: 200 });
    assert.deepEqual(plan({ range: "bytes=0-9", ifRange: 'W/"v1"' }), { status: 200 });
  });

  it("applies Range when the date is the last write's, to the second", () => {
    assert.deepEqual(plan({ range: "bytes=0-9", ifRange: LM }), partial(0, 10));
    const later = "Fri, 02 Jan 2026 03:04:06 GMT";
    assert.deepEqual(plan({ range: "bytes=0-9", ifRange: later }), { status: 200 });
  });

  it("serves whole on what is neither one tag nor a date", () => {
    for (const ifRange of ['"v1", "v2"', '"v1" x', '"v1', "W/v1", "tomorrow"]) {
      assert.deepEqual(plan({ range: "bytes=0-9", ifRange }), { status: 200 }, ifRange);
    }
  });

  it("is ignored without Range, and 416 still stands when it holds", () => {
    assert.deepEqual(plan({ ifRange: '"v2"' }), { status: 200 });
    assert.deepEqual(plan({ range: "bytes=500-", ifRange: '"v1"' }), { status: 416 });
    assert.deepEqual(plan({ range: "bytes=500-", ifRange: '"v2"' }), { status: 200 });
  });
});

describe("responseHeaders", () => {
  const info: ObjectInfo = {
    key: "docs/a.txt",
    size: 100,
    contentType: "text/plain; charset=utf-8",
    etag: '"v1"',
    lastModified: LAST_MODIFIED,
    metadata: { owner: "ann" },
  };

  function entries(headers: Headers): Record<string, string> {
    return Object.fromEntries(headers.entries());
  }

  const representation = {
    "accept-ranges": "bytes",
    "content-type": "text/plain; charset=utf-8",
    etag: '"v1"',
    "last-modified": LM,
    "x-content-type-options": "nosniff",
    "content-security-policy": "sandbox",
  };

  it("200: the validators, the type and the whole length (§8.6, §8.8, §14.3)", () => {
    assert.deepEqual(entries(responseHeaders(info, { status: 200 })), {
      ...representation,
      "content-length": "100",
    });
  });

  it("206: the range's length and Content-Range (§14.4, §15.3.7)", () => {
    assert.deepEqual(entries(responseHeaders(info, partial(90, 10))), {
      ...representation,
      "content-length": "10",
      "content-range": "bytes 90-99/100",
    });
  });

  it("304: the entity tag alone (§15.4.5)", () => {
    assert.deepEqual(entries(responseHeaders(info, { status: 304 })), { etag: '"v1"' });
  });

  it("416: Content-Range with the size alone (§15.5.17)", () => {
    assert.deepEqual(entries(responseHeaders(info, { status: 416 })), {
      "accept-ranges": "bytes",
      "content-range": "bytes */100",
    });
  });

  it("405: Allow (§15.5.6); 412: nothing", () => {
    assert.deepEqual(entries(responseHeaders(info, { status: 405 })), { allow: "GET, HEAD" });
    assert.deepEqual(entries(responseHeaders(info, { status: 412 })), {});
  });

  it("never sets Cache-Control: the app's to decide", () => {
    for (const status of [200, 304] as const) {
      assert.equal(responseHeaders(info, { status }).has("cache-control"), false);
    }
  });

  it("falls back to application/octet-stream for a type no header can carry", () => {
    const headers = responseHeaders({ ...info, contentType: "text/plain\r\nx: y" }, {
      status: 200,
    });
    assert.equal(headers.get("content-type"), "application/octet-stream");
  });
});

// ---- The reference model, over headers whose meaning their generator knows ----

interface Tag {
  readonly weak: boolean;
  readonly opaque: string;
}

/** A header as sent, and what it means: `absent` for no header, `undefined` for no valid value. */
interface Field<M> {
  readonly text: string | null;
  readonly meaning: M | "absent";
}

type RangeMeaning =
  | { readonly kind: "ignored" }
  | { readonly kind: "int"; readonly first: bigint; readonly last?: bigint }
  | { readonly kind: "suffix"; readonly length: bigint };

type IfRangeMeaning =
  | { readonly kind: "tag"; readonly tag: Tag }
  | { readonly kind: "date"; readonly seconds: number | undefined }
  | { readonly kind: "false" };

interface Case {
  readonly info: PlanInfo;
  readonly method: string;
  readonly ifMatch: Field<"*" | Tag[]>;
  readonly ifNoneMatch: Field<"*" | Tag[]>;
  readonly ifModifiedSince: Field<number | undefined>;
  readonly ifUnmodifiedSince: Field<number | undefined>;
  readonly range: Field<RangeMeaning>;
  readonly ifRange: Field<IfRangeMeaning>;
}

function conditionsOf(c: Case): RequestConditions {
  return {
    method: c.method,
    ifMatch: c.ifMatch.text,
    ifNoneMatch: c.ifNoneMatch.text,
    ifModifiedSince: c.ifModifiedSince.text,
    ifUnmodifiedSince: c.ifUnmodifiedSince.text,
    range: c.range.text,
    ifRange: c.ifRange.text,
  };
}

function model(c: Case): ResponsePlan {
  if (c.method !== "GET" && c.method !== "HEAD") return { status: 405 };
  const etag = c.info.etag;
  const modified = Math.floor(c.info.lastModified.getTime() / 1000);
  const ifMatch = c.ifMatch.meaning;
  if (ifMatch !== "absent") {
    const matched = ifMatch === "*" || ifMatch.some((t) => !t.weak && t.opaque === etag);
    if (!matched) return { status: 412 };
  } else {
    const since = c.ifUnmodifiedSince.meaning;
    if (typeof since === "number" && modified > since) return { status: 412 };
  }
  const ifNoneMatch = c.ifNoneMatch.meaning;
  if (ifNoneMatch !== "absent") {
    if (ifNoneMatch === "*" || ifNoneMatch.some((t) => t.opaque === etag)) return { status: 304 };
  } else {
    const since = c.ifModifiedSince.meaning;
    if (typeof since === "number" && since * 1000 <= NOW.getTime() && modified <= since) {
      return { status: 304 };
    }
  }
  if (c.method === "HEAD" || c.range.meaning === "absent") return { status: 200 };
  const ifRange = c.ifRange.meaning;
  if (ifRange !== "absent") {
    const holds = ifRange.kind === "tag"
      ? !ifRange.tag.weak && ifRange.tag.opaque === etag
      : ifRange.kind === "date" && ifRange.seconds === modified;
    if (!holds) return { status: 200 };
  }
  return modelRange(c.range.meaning, c.info.size);
}

function modelRange(range: RangeMeaning, size: number): ResponsePlan {
  const total = BigInt(size);
  if (range.kind === "ignored") return { status: 200 };
  if (range.kind === "suffix") {
    if (range.length === 0n) return { status: 416 };
    if (total === 0n) return { status: 200 };
    const offset = range.length >= total ? 0n : total - range.length;
    return partial(Number(offset), Number(total - offset));
  }
  if (range.last !== undefined && range.last < range.first) return { status: 200 };
  if (range.first >= total) return { status: 416 };
  const last = range.last === undefined || range.last >= total ? total - 1n : range.last;
  return partial(Number(range.first), Number(last - range.first + 1n));
}

// ---- Generators ----

const STORED_TAGS = ['"v1"', '"v2"', '"a,b"', '""'];
const SECOND = 1000;
const LM_SECONDS = Math.floor(LAST_MODIFIED.getTime() / SECOND);
const NOW_SECONDS = Math.floor(NOW.getTime() / SECOND);

const ows = fc.constantFrom("", " ", "\t", " \t ");
const absent = fc.constantFrom<Field<never>>(
  { text: null, meaning: "absent" },
  { text: "", meaning: "absent" },
  { text: " \t", meaning: "absent" },
);

function padded<M>(field: fc.Arbitrary<Field<M>>): fc.Arbitrary<Field<M>> {
  return fc.tuple(ows, field, ows).map(([before, f, after]) =>
    f.text === null ? f : { ...f, text: before + f.text + after }
  );
}

const tag: fc.Arbitrary<Tag> = fc.record({
  weak: fc.boolean(),
  opaque: fc.constantFrom(...STORED_TAGS, '"v3"', '"x y"'),
});
const tagText = (t: Tag): string => (t.weak ? "W/" : "") + t.opaque;

const separator = fc.constantFrom(",", ", ", " ,", " , ", ",\t", ",,", ", ,");

// A list: well formed, or broken by a member that is no tag (what comes after it is unread).
const tagList: fc.Arbitrary<Field<"*" | Tag[]>> = fc.oneof(
  fc.constant({ text: "*", meaning: "*" as const }),
  fc.tuple(fc.array(tag, { minLength: 1, maxLength: 4 }), separator, fc.constantFrom("", ", "))
    .map(([tags, sep, end]) => ({ text: tags.map(tagText).join(sep) + end, meaning: tags })),
  fc.tuple(
    fc.array(tag, { maxLength: 3 }),
    fc.constantFrom("junk", "W/", "*", "W/x", "v1"),
    fc.array(tag, { maxLength: 3 }),
  ).map(([before, junk, after]) => {
    const text = [...before.map(tagText), junk, ...after.map(tagText)].join(", ");
    // `*` alone is no junk: it is the list that matches any object.
    return { text, meaning: text === "*" ? "*" as const : before };
  }),
  fc.tuple(tag, tag).map(([first, second]) => ({
    text: `${tagText(first)} ${tagText(second)}`,
    meaning: [first],
  })),
);

const DAYS = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
const FULL_DAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];
const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
const two = (n: number): string => String(n).padStart(2, "0");

function clock(d: Date): string {
  return `${two(d.getUTCHours())}:${two(d.getUTCMinutes())}:${two(d.getUTCSeconds())}`;
}

const DATE_FORMS: readonly ((seconds: number) => string)[] = [
  (s) => new Date(s * SECOND).toUTCString(),
  (s) => {
    const d = new Date(s * SECOND);
    const date = `${two(d.getUTCDate())}-${MONTHS[d.getUTCMonth()]}-${
      two(d.getUTCFullYear() % 100)
    }`;
    return `${FULL_DAYS[d.getUTCDay()]}, ${date} ${clock(d)} GMT`;
  },
  (s) => {
    const d = new Date(s * SECOND);
    const day = String(d.getUTCDate()).padStart(2, " ");
    return `${DAYS[d.getUTCDay()]} ${MONTHS[d.getUTCMonth()]} ${day} ${
      clock(d)
    } ${d.getUTCFullYear()}`;
  },
];

// Seconds near the last write and the clock, or anywhere an RFC 850 year reads unambiguously.
const seconds = fc.oneof(
  fc.integer({ min: LM_SECONDS - 2, max: LM_SECONDS + 2 }),
  fc.integer({ min: NOW_SECONDS - 2, max: NOW_SECONDS + 2 }),
  fc.integer({ min: Date.UTC(1980, 0, 1) / SECOND, max: Date.UTC(2070, 0, 1) / SECOND }),
);

const httpDate: fc.Arbitrary<Field<number | undefined>> = fc.oneof(
  fc.tuple(seconds, fc.constantFrom(...DATE_FORMS)).map(([s, form]) => ({
    text: form(s),
    meaning: s,
  })),
  fc.constantFrom(
    "yesterday",
    "2026-01-02T03:04:05Z",
    `${LM}, ${LM}`,
    "Fri, 02 jan 2026 03:04:05 GMT",
    "Fri, 02 Jan 2026 03:04:05 UTC",
    "Fri, 31 Apr 2026 03:04:05 GMT",
    "Fri, 02 Jan 2026 03:60:05 GMT",
    "Fri,  2 Jan 2026 03:04:05 GMT",
  ).map((text) => ({ text, meaning: undefined })),
);

const position = fc.oneof(
  { weight: 4, arbitrary: fc.bigInt({ min: 0n, max: 320n }) },
  fc.bigInt({ min: 2n ** 53n - 4n, max: 2n ** 53n + 4n }),
  fc.bigInt({ min: 0n, max: 10n ** 30n }),
);
const digits = (n: bigint, zeros: number): string => "0".repeat(zeros) + n.toString();
const zeros = fc.nat(2);

interface Spec {
  readonly text: string;
  readonly meaning: RangeMeaning;
}

const rangeSpec: fc.Arbitrary<Spec> = fc.oneof(
  // last-pos: none, anywhere (often before first-pos: invalid), or a little after first-pos.
  fc.tuple(position, fc.option(fc.oneof(position, fc.bigInt({ min: -50n, max: -1n }))), zeros)
    .map(([first, to, z]): Spec => {
      if (to === null) return { text: `${digits(first, z)}-`, meaning: { kind: "int", first } };
      const last = to < 0n ? first - to - 1n : to;
      return {
        text: `${digits(first, z)}-${digits(last, z)}`,
        meaning: { kind: "int", first, last },
      };
    }),
  fc.tuple(position, zeros).map(([length, z]): Spec => ({
    text: `-${digits(length, z)}`,
    meaning: { kind: "suffix", length },
  })),
  fc.constantFrom("-", "", "abc", "1-2-3", "+1-2", "1 - 2", "1.5-2", "0x1-").map((text): Spec => ({
    text,
    meaning: { kind: "ignored" },
  })),
);

const range: fc.Arbitrary<Field<RangeMeaning>> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.tuple(
      fc.constantFrom("bytes", "Bytes", "BYTES"),
      rangeSpec,
      fc.constantFrom("", ", "),
    )
      .map(([unit, spec, end]) => ({ text: `${unit}=${spec.text}${end}`, meaning: spec.meaning })),
  },
  fc.tuple(rangeSpec, rangeSpec, separator).map(([a, b, sep]): Spec => ({
    text: `bytes=${a.text}${sep}${b.text}`,
    // Two members, unless one was empty: then the other is the only range.
    meaning: a.text === "" ? b.meaning : b.text === "" ? a.meaning : { kind: "ignored" },
  })),
  fc.tuple(fc.constantFrom("items", "byte", "bytes ", ""), rangeSpec).map(([unit, spec]) => ({
    text: `${unit}=${spec.text}`,
    meaning: { kind: "ignored" as const },
  })),
);

const ifRange: fc.Arbitrary<Field<IfRangeMeaning>> = fc.oneof(
  tag.map((t) => ({ text: tagText(t), meaning: { kind: "tag" as const, tag: t } })),
  httpDate.map((d) => ({
    text: d.text,
    meaning: { kind: "date" as const, seconds: d.meaning === "absent" ? undefined : d.meaning },
  })),
  fc.constantFrom('"v1", "v2"', '"v1" x', '"v1', "W/v1").map((text) => ({
    text,
    meaning: { kind: "false" as const },
  })),
);

// Present one time in `1 + absentWeight`: preconditions mostly absent, so that ranges are reached.
function field<M>(arbitrary: fc.Arbitrary<Field<M>>, absentWeight = 3): fc.Arbitrary<Field<M>> {
  return fc.oneof({ weight: absentWeight, arbitrary: absent }, {
    weight: 1,
    arbitrary: padded(arbitrary),
  });
}

const info: fc.Arbitrary<PlanInfo> = fc.record({
  size: fc.oneof(
    fc.constantFrom(0, 1, 2, 100),
    fc.integer({ min: 0, max: 300 }),
    fc.integer({ min: Number.MAX_SAFE_INTEGER - 4, max: Number.MAX_SAFE_INTEGER }),
  ),
  etag: fc.constantFrom(...STORED_TAGS),
  lastModified: fc.integer({ min: LM_SECONDS - 2, max: LM_SECONDS + 2 }).chain((s) =>
    fc.integer({ min: 0, max: 999 }).map((ms) => new Date(s * SECOND + ms))
  ),
});

const method = fc.oneof(
  { weight: 4, arbitrary: fc.constant("GET") },
  { weight: 2, arbitrary: fc.constant("HEAD") },
  { weight: 1, arbitrary: fc.constantFrom("POST", "PUT", "get", "") },
);

const grammarCase: fc.Arbitrary<Case> = fc.record({
  info,
  method,
  ifMatch: field(tagList),
  ifNoneMatch: field(tagList),
  ifModifiedSince: field(httpDate),
  ifUnmodifiedSince: field(httpDate),
  range: field(range, 1),
  ifRange: field(ifRange, 2),
});

// GET with no precondition: every case reaches Range.
const rangeCase: fc.Arbitrary<Case> = fc.record({
  info,
  method: fc.constant("GET"),
  ifMatch: absent,
  ifNoneMatch: absent,
  ifModifiedSince: absent,
  ifUnmodifiedSince: absent,
  range: padded(range),
  ifRange: field(ifRange),
});

// Any value at all: from the grammar, from its characters, or any string.
const anyText: fc.Arbitrary<string | null> = fc.oneof(
  fc.constant(null),
  fc.oneof(tagList, httpDate, range, ifRange).map((f) => f.text),
  fc.string({ unit: fc.constantFrom(...'bytes=BYTES0123456789-, \t"W/*:GMTJanFri'.split("")) }),
  fc.string({ unit: "binary" }),
  fc.string(),
);

const rarely = fc.oneof({ weight: 4, arbitrary: fc.constant(null) }, anyText);

const anyConditions: fc.Arbitrary<RequestConditions> = fc.record({
  method: fc.oneof({ weight: 4, arbitrary: method }, fc.string()),
  ifMatch: rarely,
  ifNoneMatch: rarely,
  ifModifiedSince: rarely,
  ifUnmodifiedSince: rarely,
  range: fc.oneof({ weight: 2, arbitrary: range.map((f) => f.text) }, anyText),
  ifRange: rarely,
});

// The one Range that can be unsatisfiable: one well-formed bytes range, with empty members.
const SINGLE_RANGE = /^[ \t,]*bytes=[ \t,]*(?:([0-9]+)-([0-9]*)|-([0-9]+))[ \t,]*$/i;

function unsatisfiable(header: string | null | undefined, size: number): boolean {
  const match = SINGLE_RANGE.exec(header ?? "");
  if (match === null) return false;
  const [, first, last, suffix] = match;
  if (suffix !== undefined) return BigInt(suffix) === 0n;
  return BigInt(first) >= BigInt(size) && (last === "" || BigInt(last) >= BigInt(first));
}

// Present as the planner reads headers: not only spaces and tabs (other whitespace is a value).
function present(value: string | null | undefined): boolean {
  return value != null && /[^ \t]/.test(value);
}

describe("planResponse: properties", () => {
  it("plans what the reference model plans, for headers built from the grammar", () => {
    fc.assert(
      fc.property(grammarCase, (c) => {
        assert.deepEqual(planResponse(c.info, conditionsOf(c), NOW), model(c));
      }),
      propertyOptions(500),
    );
  });

  it("plans the range the reference model plans, with no precondition in the way", () => {
    fc.assert(
      fc.property(rangeCase, (c) => {
        assert.deepEqual(planResponse(c.info, conditionsOf(c), NOW), model(c));
      }),
      propertyOptions(500),
    );
  });

  // 206 is non-empty and within the object; HEAD gets neither 206 nor 416; 416 comes only for a
  // well-formed range past the end; 304 and 412 only from the headers that can give them.
  it("never throws on any header value, and gives each status only where RFC 9110 does", () => {
    fc.assert(
      fc.property(info, anyConditions, (i, conditions) => {
        const planned = planResponse(i, conditions, NOW);
        const head = conditions.method === "HEAD";
        const get = conditions.method === "GET";
        switch (planned.status) {
          case 206: {
            const { offset, length } = planned.range;
            assert.ok(get);
            assert.ok(Number.isSafeInteger(offset) && Number.isSafeInteger(length));
            assert.ok(offset >= 0 && length >= 1 && offset + length <= i.size);
            break;
          }
          case 416:
            assert.ok(get && unsatisfiable(conditions.range, i.size), conditions.range ?? "");
            break;
          case 304:
            assert.ok(get || head);
            assert.ok(present(conditions.ifNoneMatch) || present(conditions.ifModifiedSince));
            break;
          case 412:
            assert.ok(present(conditions.ifMatch) || present(conditions.ifUnmodifiedSince));
            break;
          case 405:
            assert.ok(!get && !head);
            break;
          default:
            assert.equal(planned.status, 200);
            assert.ok(get || head);
        }
        assert.ok(!(head && (planned.status === 206 || planned.status === 416)));
      }),
      propertyOptions(500),
    );
  });

  it("responseHeaders never throws, whatever a store holds, and states the planned range", () => {
    const stored = fc.record({
      key: fc.constant("k"),
      size: fc.integer({ min: 1, max: 1000 }),
      contentType: fc.oneof(fc.constant("image/png"), fc.string({ unit: "binary" })),
      etag: fc.oneof(fc.constant('"v1"'), fc.string({ unit: "binary" })),
      lastModified: fc.date(),
      metadata: fc.constant({}),
    });
    fc.assert(
      fc.property(stored, anyConditions, (object, conditions) => {
        const planned = planResponse(object, conditions, NOW);
        const headers = responseHeaders(object, planned);
        if (planned.status === 206) {
          const { offset, length } = planned.range;
          const range = `bytes ${offset}-${offset + length - 1}/${object.size}`;
          assert.equal(headers.get("content-range"), range);
          assert.equal(headers.get("content-length"), String(length));
        }
        if (planned.status === 200) {
          assert.equal(headers.get("content-length"), String(object.size));
        }
      }),
      propertyOptions(300),
    );
  });
});
