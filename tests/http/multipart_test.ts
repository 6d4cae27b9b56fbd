import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { HttpException } from "../../mod.ts";
import {
  MAX_MULTIPART_PARTS,
  MAX_PART_HEADER_SIZE,
  multipartBoundary,
  MultipartParser,
  type MultipartParserLimits,
  type MultipartPart,
  parseMultipart,
} from "../../src/http/multipart.ts";
import { propertyOptions } from "../property.ts";
import { referenceParse } from "./multipart_reference.ts";

const encoder = new TextEncoder();

/** A part as the reference model holds it. */
interface ModelPart {
  readonly name: string;
  readonly filename?: string;
  readonly contentType?: string;
  readonly body: Uint8Array;
}

// What an HTML form encodes in a quoted name or filename (the HTML standard's multipart/form-data
// encoding algorithm): `"` as %22, CR as %0D, LF as %0A. Everything else goes as UTF-8.
const encodeName = (name: string) =>
  name.replaceAll('"', "%22").replaceAll("\r", "%0D").replaceAll("\n", "%0A");

function concat(chunks: readonly (string | Uint8Array)[]): Uint8Array {
  const bytes = chunks.map((c) => typeof c === "string" ? encoder.encode(c) : c);
  const out = new Uint8Array(bytes.reduce((n, b) => n + b.byteLength, 0));
  let at = 0;
  for (const b of bytes) {
    out.set(b, at);
    at += b.byteLength;
  }
  return out;
}

/** The reference serializer: RFC 2046 framing, RFC 7578 headers. */
function serialize(
  parts: readonly ModelPart[],
  boundary: string,
  { preamble = "", epilogue = "", padding = "" } = {},
): Uint8Array {
  const chunks: (string | Uint8Array)[] = [];
  if (preamble !== "") chunks.push(preamble, "\r\n");
  for (const part of parts) {
    chunks.push(`--${boundary}${padding}\r\n`);
    let disposition = `form-data; name="${encodeName(part.name)}"`;
    if (part.filename !== undefined) disposition += `; filename="${encodeName(part.filename)}"`;
    chunks.push(`Content-Disposition: ${disposition}\r\n`);
    if (part.contentType !== undefined) chunks.push(`Content-Type: ${part.contentType}\r\n`);
    chunks.push("\r\n", part.body, "\r\n");
  }
  chunks.push(`--${boundary}--${padding}`, epilogue);
  return concat(chunks);
}

/** Plain objects of the parts (fast-check may make records without a prototype). */
function plain(parts: readonly (MultipartPart | ModelPart)[]): ModelPart[] {
  return parts.map((p) => {
    const model: { -readonly [K in keyof ModelPart]: ModelPart[K] } = {
      name: p.name,
      body: Uint8Array.from(p.body),
    };
    if (p.filename !== undefined) model.filename = p.filename;
    if (p.contentType !== undefined) model.contentType = p.contentType;
    return model;
  });
}

function refused(status: number, message?: RegExp | string) {
  return (error: unknown) => {
    assert.ok(error instanceof HttpException, String(error));
    assert.equal(error.status.getValue(), status, error.message);
    if (typeof message === "string") assert.equal(error.message, message);
    else if (message !== undefined) assert.match(error.message, message);
    return true;
  };
}

const BCHARS = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ'()+_-./:=?";
const boundary = fc.string({
  unit: fc.constantFrom(...BCHARS),
  minLength: 1,
  maxLength: 70,
});
// Names hold what a form field may be called, the characters a quoted string must encode among
// them (but no `%`, which a decoder cannot tell from an encoding the client made).
const nameText = fc.string({
  unit: fc.oneof(
    fc.constantFrom('"', "\r", "\n", ";", "=", "\\", " ", "\t", "é", "😀", "__proto__"),
    fc.string({ unit: "grapheme-ascii", minLength: 1, maxLength: 1 }).filter((c) => c !== "%"),
  ),
  maxLength: 6,
});
const body = fc.oneof(
  fc.uint8Array({ maxLength: 40 }),
  fc.constantFrom("", "\r\n", "--", "\r\n-", "a\r\n\r\nb", "%22").map((t) => encoder.encode(t)),
);
const modelPart: fc.Arbitrary<ModelPart> = fc.record(
  {
    name: nameText,
    filename: nameText,
    contentType: fc.constantFrom("text/plain", "image/png", "application/octet-stream; x=1"),
    body,
  },
  { requiredKeys: ["name", "body"] },
);

/** Whether a body holds the delimiter a boundary makes: the sender chose the boundary badly. */
function holdsDelimiter(parts: readonly ModelPart[], boundary: string): boolean {
  const delimiter = `\r\n--${boundary}`;
  return parts.some((p) =>
    // Latin-1, one character per byte: the delimiter is ASCII.
    `\r\n${String.fromCharCode(...p.body)}\r\n`.slice(0, -2).includes(delimiter) ||
    String.fromCharCode(...p.body).startsWith(`--${boundary}`)
  );
}

describe("parseMultipart (property, against a reference serializer)", () => {
  it("reads back every part: name, filename, type and bytes, whatever the bytes", () => {
    fc.assert(
      fc.property(
        fc.array(modelPart, { maxLength: 5 }),
        boundary,
        fc.constantFrom("", "preamble text", "--not-it"),
        fc.constantFrom("", "\r\n", "epilogue\r\n--x--\r\n"),
        fc.constantFrom("", " ", "\t \t"),
        (parts, b, preamble, epilogue, padding) => {
          fc.pre(!holdsDelimiter(parts, b) && !preamble.includes(`--${b}`));
          const bytes = serialize(parts, b, { preamble, epilogue, padding });
          assert.deepEqual(plain(parseMultipart(bytes, b)), plain(parts));
        },
      ),
      propertyOptions(400),
    );
  });

  it("refuses every cut of a body before its closing boundary with a 400; after it, reads the same", () => {
    fc.assert(
      fc.property(
        fc.array(modelPart, { minLength: 1, maxLength: 3 }),
        boundary,
        fc.nat(),
        (parts, b, at) => {
          fc.pre(!holdsDelimiter(parts, b));
          const bytes = serialize(parts, b, { epilogue: "\r\nafter" });
          const closeEnd = bytes.byteLength - "\r\nafter".length;
          const cut = 1 + (at % (bytes.byteLength - 1));
          if (cut >= closeEnd) {
            assert.deepEqual(plain(parseMultipart(bytes.subarray(0, cut), b)), plain(parts));
          } else {
            assert.throws(() => parseMultipart(bytes.subarray(0, cut), b), refused(400));
          }
        },
      ),
      propertyOptions(400),
    );
  });

  it("answers any mutated body with its parts, a 400 or a 413, never another error", () => {
    const edit = fc.record({
      at: fc.nat(),
      remove: fc.nat({ max: 4 }),
      insert: fc.oneof(
        fc.uint8Array({ maxLength: 6 }),
        fc.constantFrom("\r\n", "--", "\r\n\r\n", '"', ";", ":", "--B", "\r\n--B--").map((t) =>
          encoder.encode(t)
        ),
      ),
    });
    fc.assert(
      fc.property(
        fc.array(modelPart, { maxLength: 3 }),
        fc.array(edit, { minLength: 1, maxLength: 4 }),
        (parts, edits) => {
          fc.pre(!holdsDelimiter(parts, "B"));
          let bytes = serialize(parts, "B");
          for (const { at, remove, insert } of edits) {
            const i = bytes.byteLength === 0 ? 0 : at % bytes.byteLength;
            bytes = concat([bytes.subarray(0, i), insert, bytes.subarray(i + remove)]);
          }
          try {
            for (const part of parseMultipart(bytes, "B", 2)) {
              assert.equal(typeof part.name, "string");
              assert.ok(part.body instanceof Uint8Array);
            }
          } catch (error) {
            assert.ok(error instanceof HttpException, String(error));
            assert.ok([400, 413].includes(error.status.getValue()), error.message);
          }
        },
      ),
      propertyOptions(400),
    );
  });

  it("takes up to maxParts parts and refuses one more with a 413", () => {
    fc.assert(
      fc.property(fc.nat({ max: 12 }), fc.nat({ max: 12 }), (count, max) => {
        const parts = Array.from({ length: count }, (_, i) => ({
          name: `p${i}`,
          body: encoder.encode(String(i)),
        }));
        const bytes = serialize(parts, "b");
        if (count <= max) assert.equal(parseMultipart(bytes, "b", max).length, count);
        else {
          assert.throws(
            () => parseMultipart(bytes, "b", max),
            refused(413, `Multipart body has more than ${max} parts (server.multipart.max-parts)`),
          );
        }
      }),
      propertyOptions(100),
    );
  });
});

/** What a parse gave: the parts, or the error's status and message. */
type Outcome = { parts: ModelPart[] } | { status: number; message: string };

function outcome(parse: () => readonly (MultipartPart | ModelPart)[]): Outcome {
  try {
    return { parts: plain(parse()) };
  } catch (error) {
    assert.ok(error instanceof HttpException, String(error));
    return { status: error.status.getValue(), message: error.message };
  }
}

/** Streams `bytes` to a parser in chunks cut at `cuts` (offsets, any order), collecting parts. */
function streamed(
  bytes: Uint8Array,
  boundary: string,
  cuts: readonly number[],
  limits: Partial<MultipartParserLimits> = {},
): ModelPart[] {
  const parts: ModelPart[] = [];
  let current: { name: string; filename?: string; contentType?: string; chunks: number[] };
  const parser = new MultipartParser(boundary, {
    part: ({ name, filename, contentType }) => {
      current = { name, chunks: [] };
      if (filename !== undefined) current.filename = filename;
      if (contentType !== undefined) current.contentType = contentType;
    },
    // A copy: the view is only good until write returns.
    data: (chunk) => void current.chunks.push(...chunk),
    end: () => {
      const { chunks, ...head } = current;
      parts.push({ ...head, body: Uint8Array.from(chunks) });
    },
  }, { maxParts: 1000, maxFileSize: Infinity, maxRequestSize: Infinity, ...limits });
  const at = [...new Set(cuts.map((c) => c % (bytes.byteLength + 1)))].sort((a, b) => a - b);
  let from = 0;
  for (const cut of [...at, bytes.byteLength]) {
    // Each chunk a fresh copy, as a stream hands them: the parser must keep no view of the last.
    parser.write(bytes.slice(from, cut));
    from = cut;
  }
  parser.end();
  return parts;
}

const mutation = fc.record({
  at: fc.nat(),
  remove: fc.nat({ max: 4 }),
  insert: fc.oneof(
    fc.uint8Array({ maxLength: 6 }),
    fc.constantFrom("\r\n", "--", "\r\n\r\n", '"', ";", ":", "--B", "\r\n--B--", " ", "\r").map((
      t,
    ) => encoder.encode(t)),
  ),
});

function mutate(
  bytes: Uint8Array,
  edits: readonly { at: number; remove: number; insert: Uint8Array }[],
) {
  for (const { at, remove, insert } of edits) {
    const i = bytes.byteLength === 0 ? 0 : at % bytes.byteLength;
    bytes = concat([bytes.subarray(0, i), insert, bytes.subarray(i + remove)]);
  }
  return bytes;
}

describe("MultipartParser (property: a body read as it arrives)", () => {
  it("gives the same parts, or the same error, however the body is cut into chunks", () => {
    fc.assert(
      fc.property(
        fc.array(modelPart, { maxLength: 3 }),
        fc.array(mutation, { maxLength: 3 }),
        fc.array(fc.nat(), { maxLength: 12 }),
        fc.constantFrom("", "pre", "\r\n--B"),
        (parts, edits, cuts, preamble) => {
          fc.pre(!holdsDelimiter(parts, "B"));
          const bytes = mutate(serialize(parts, "B", { preamble }), edits);
          assert.deepEqual(
            outcome(() => streamed(bytes, "B", cuts, { maxParts: 2 })),
            outcome(() => parseMultipart(bytes, "B", 2)),
          );
        },
      ),
      propertyOptions(400),
    );
  });

  it("reads a body byte by byte as it reads it whole", () => {
    fc.assert(
      fc.property(fc.array(modelPart, { maxLength: 3 }), boundary, (parts, b) => {
        fc.pre(!holdsDelimiter(parts, b));
        const bytes = serialize(parts, b, { preamble: "x", epilogue: "\r\n--" + b });
        const everyByte = Array.from({ length: bytes.byteLength }, (_, i) => i);
        assert.deepEqual(plain(streamed(bytes, b, everyByte)), plain(parts));
      }),
      propertyOptions(100),
    );
  });

  it("agrees with the whole-body parser it replaced: the same parts, or an error of the same status", () => {
    fc.assert(
      fc.property(
        fc.array(modelPart, { maxLength: 3 }),
        fc.array(mutation, { maxLength: 4 }),
        (parts, edits) => {
          fc.pre(!holdsDelimiter(parts, "B"));
          const bytes = mutate(serialize(parts, "B"), edits);
          const now = outcome(() => parseMultipart(bytes, "B", 2));
          const before = outcome(() => referenceParse(bytes, "B", 2));
          if ("parts" in before) assert.deepEqual(now, before);
          else {
            assert.ok("status" in now, `now ${JSON.stringify(now)}, before ${before.message}`);
            assert.equal(now.status, before.status, `${now.message} / ${before.message}`);
          }
        },
      ),
      propertyOptions(1000),
    );
  });
});

describe("MultipartParser limits", () => {
  const body = serialize([
    { name: "a", body: new Uint8Array(100) },
    { name: "f", filename: "x.bin", body: new Uint8Array(300) },
  ], "B");

  it("a part's content over maxFileSize is a 413 naming the part and the key, at the first byte over", () => {
    assert.equal(streamed(body, "B", [], { maxFileSize: 300 }).length, 2);
    const refusal = outcome(() => streamed(body, "B", [150], { maxFileSize: 299 }));
    assert.deepEqual(refusal, {
      status: 413,
      message: "Multipart part 'f' exceeds 299 bytes (server.multipart.max-file-size)",
    });
    // The content of every part counts, a text part's too.
    assert.deepEqual(outcome(() => streamed(body, "B", [], { maxFileSize: 99 })), {
      status: 413,
      message: "Multipart part 'a' exceeds 99 bytes (server.multipart.max-file-size)",
    });
  });

  it("a body over maxRequestSize is a 413 naming the key as the chunk that passes it is written", () => {
    assert.equal(streamed(body, "B", [], { maxRequestSize: body.byteLength }).length, 2);
    const parser = new MultipartParser("B", { part() {}, data() {}, end() {} }, {
      maxParts: 10,
      maxFileSize: Infinity,
      maxRequestSize: 10,
    });
    parser.write(body.subarray(0, 10));
    assert.throws(
      () => parser.write(body.subarray(10, 11)),
      refused(413, "Multipart body exceeds 10 bytes (server.multipart.max-request-size)"),
    );
  });

  it("headers that run on past their limit are a 400, however they arrive", () => {
    const head = encoder.encode('--B\r\nContent-Disposition: form-data; name="a"\r\nX-Long: ');
    const long = concat([head, new Uint8Array(MAX_PART_HEADER_SIZE).fill(0x61)]);
    for (const cuts of [[], [head.byteLength + 10], [1000, 5000, 9000]]) {
      assert.deepEqual(outcome(() => streamed(long, "B", cuts)), {
        status: 400,
        message: "Malformed multipart body: part 1's headers are not ended by an empty line " +
          `within ${MAX_PART_HEADER_SIZE} bytes`,
      });
    }
    const within = concat([
      '--B\r\nContent-Disposition: form-data; name="a"\r\nX-Long: ',
      "b".repeat(MAX_PART_HEADER_SIZE - 60),
      "\r\n\r\nv\r\n--B--",
    ]);
    assert.equal(streamed(within, "B", [3, 200]).length, 1);
  });
});

describe("parseMultipart (examples)", () => {
  const part = (headers: string, content = "v") => `--b\r\n${headers}\r\n\r\n${content}\r\n`;
  const read = (text: string) => parseMultipart(encoder.encode(text), "b");

  it("reads what the platform's own FormData encoder writes", async () => {
    const form = new FormData();
    form.append("text", "héllo wörld; a=b");
    form.append("__proto__", "x");
    form.append("file", new File([new Uint8Array([0, 13, 10, 255, 45, 45])], "a b.bin"));
    // Bun's File adds `;charset=utf-8` to a text type: the encoder sends the type the File has.
    const typed = new File(["<p/>"], "page.html", { type: "text/html" });
    form.append("typed", typed);
    const response = new Response(form);
    const type = response.headers.get("content-type")!;
    const parts = parseMultipart(
      new Uint8Array(await response.arrayBuffer()),
      multipartBoundary(type),
    );
    assert.deepEqual(parts.map((p) => [p.name, p.filename]), [
      ["text", undefined],
      ["__proto__", undefined],
      ["file", "a b.bin"],
      ["typed", "page.html"],
    ]);
    assert.equal(new TextDecoder().decode(parts[0].body), "héllo wörld; a=b");
    assert.deepEqual([...parts[2].body], [0, 13, 10, 255, 45, 45]);
    assert.equal(parts[3].contentType, typed.type);
    assert.equal(new TextDecoder().decode(parts[3].body), "<p/>");
  });

  it("an empty body has no parts; a body without its boundary is a 400", () => {
    assert.deepEqual(read(""), []);
    for (const text of ["garbage garbage", "--a\r\n\r\nx\r\n--a--", "-b\r\n"]) {
      assert.throws(
        () => read(text),
        refused(400, "Malformed multipart body: it does not start with its boundary"),
        text,
      );
    }
  });

  it("a boundary that never ends, or a last part without its closing boundary, is a 400", () => {
    for (
      const text of [
        '--b\r\nContent-Disposition: form-data; name="a"\r\n\r\nhello',
        part('Content-Disposition: form-data; name="a"'),
        part('Content-Disposition: form-data; name="a"') + "--b\r\n",
        part('Content-Disposition: form-data; name="a"') + "--b-",
      ]
    ) {
      assert.throws(() => read(text), refused(400, /^Malformed multipart body: /), text);
    }
    assert.throws(
      () => read('--b\r\nContent-Disposition: form-data; name="a"\r\n\r\n' + "x".repeat(5000)),
      refused(400, "Malformed multipart body: it ends before its closing boundary"),
    );
  });

  it("a part without a name, or without Content-Disposition, is a 400 naming its place", () => {
    assert.throws(
      () =>
        read(
          part('Content-Disposition: form-data; name="a"') +
            part("Content-Disposition: form-data") + "--b--",
        ),
      refused(
        400,
        'Malformed multipart body: part 2 has no name (Content-Disposition: form-data; name="...")',
      ),
    );
    assert.throws(
      () => read(part("Content-Type: text/plain") + "--b--"),
      refused(
        400,
        'Malformed multipart body: part 1 has no name (Content-Disposition: form-data; name="...")',
      ),
    );
    assert.throws(
      () => read(part('Content-Disposition: attachment; name="a"') + "--b--"),
      refused(400, "Malformed multipart body: part 1 is not form-data"),
    );
  });

  it("bare LF line ends, a header without a colon or headers that never end are 400", () => {
    for (
      const text of [
        '--b\nContent-Disposition: form-data; name="a"\n\nv\n--b--\n',
        part('Content-Disposition form-data; name="a"') + "--b--",
        '--b\r\nContent-Disposition: form-data; name="a"\r\n--b--',
        '--b\r\nContent-Disposition: form-data; name="a"\r\n\r\n--b--',
        part(' Content-Disposition: form-data; name="a"') + "--b--",
      ]
    ) {
      assert.throws(() => read(text), refused(400, /^Malformed multipart body: /), text);
    }
  });

  it("names: quoted (with %22, %0D, %0A decoded as browsers encode them) or a token; anything ambiguous is a 400", () => {
    const nameOf = (disposition: string) =>
      read(part(`Content-Disposition: ${disposition}`) + "--b--")[0].name;
    assert.equal(nameOf('form-data; name="a%22b%0D%0Ac"'), 'a"b\r\nc');
    assert.equal(nameOf('form-data; name="a\\b; c=d"'), "a\\b; c=d");
    assert.equal(nameOf("form-data; name=token"), "token");
    assert.equal(nameOf('FORM-DATA ;  NAME = "x" '), "x");
    assert.equal(nameOf('form-data; name=""'), "");
    assert.equal(nameOf('form-data; name="__proto__"'), "__proto__");
    assert.equal(nameOf('form-data; name="caf\u00e9"'), "café");
    for (
      const disposition of [
        'form-data; name="a',
        'form-data; name="a"; name="b"',
        'form-data; name="a"; filename="x"; filename="y"',
        'form-data; name="a" x',
        "form-data; name",
      ]
    ) {
      assert.throws(
        () => nameOf(disposition),
        refused(400, /^Malformed multipart body: /),
        disposition,
      );
    }
    assert.throws(
      () =>
        read(
          part(
            'Content-Disposition: form-data; name="a"\r\nContent-Disposition: form-data; name="b"',
          ) +
            "--b--",
        ),
      refused(400, "Malformed multipart body: part 1 has two Content-Disposition headers"),
    );
  });

  it("a name or filename whose bytes are not UTF-8 is a 400", () => {
    const bytes = concat([
      '--b\r\nContent-Disposition: form-data; name="a',
      new Uint8Array([0xff]),
      '"\r\n\r\nv\r\n--b--',
    ]);
    assert.throws(
      () => parseMultipart(bytes, "b"),
      refused(400, "Malformed multipart body: part 1's Content-Disposition is not valid UTF-8"),
    );
  });

  it("a byte-order mark is kept: before form-data it is no form-data, in a name it is the name's", () => {
    const bom = new Uint8Array([0xef, 0xbb, 0xbf]);
    assert.throws(
      () =>
        parseMultipart(
          concat(["--b\r\nContent-Disposition:", bom, 'form-data; name="a"\r\n\r\nv\r\n--b--']),
          "b",
        ),
      refused(400, "Malformed multipart body: part 1 is not form-data"),
    );
    const named = parseMultipart(
      concat(['--b\r\nContent-Disposition: form-data; name="', bom, 'a"\r\n\r\nv\r\n--b--']),
      "b",
    );
    assert.equal(named[0].name, "\ufeffa");
  });

  it("a file part is one with a filename, an empty one included", () => {
    const [file, empty, text] = read(
      part(
        'Content-Disposition: form-data; name="f"; filename="a.txt"\r\nContent-Type: text/plain',
        "abc",
      ) +
        part(
          'Content-Disposition: form-data; name="g"; filename=""\r\nContent-Type: application/octet-stream',
          "",
        ) +
        part('Content-Disposition: form-data; name="t"', "") + "--b--",
    );
    assert.deepEqual([file.filename, file.contentType, [...file.body]], ["a.txt", "text/plain", [
      97,
      98,
      99,
    ]]);
    assert.deepEqual([empty.filename, empty.body.byteLength], ["", 0]);
    assert.deepEqual([text.filename, text.contentType, text.body.byteLength], [
      undefined,
      undefined,
      0,
    ]);
  });

  it("a delimiter followed by neither -- nor a line end is a 400", () => {
    assert.throws(
      () => read(part('Content-Disposition: form-data; name="a"') + "--bX\r\n" + "--b--"),
      refused(400, /^Malformed multipart body: /),
    );
  });

  it("refuses 10,000 tiny parts with a 413 at the default limit of 1000", () => {
    const tiny = 'Content-Disposition: form-data; name="a"';
    assert.equal(MAX_MULTIPART_PARTS, 1000);
    assert.equal(read(part(tiny).repeat(1000) + "--b--").length, 1000);
    assert.throws(
      () => read(part(tiny).repeat(10_000) + "--b--"),
      refused(413, "Multipart body has more than 1000 parts (server.multipart.max-parts)"),
    );
  });
});

describe("multipartBoundary", () => {
  it("reads the boundary parameter, a token or quoted", () => {
    assert.equal(multipartBoundary("multipart/form-data; boundary=abc"), "abc");
    assert.equal(multipartBoundary('multipart/form-data;boundary="a b:c"'), "a b:c");
    assert.equal(multipartBoundary("Multipart/Form-Data; charset=x; BOUNDARY=----W1"), "----W1");
  });

  it("refuses a missing, empty, too long or ill-made boundary with a 400", () => {
    assert.throws(
      () => multipartBoundary("multipart/form-data"),
      refused(400, "Content-Type multipart/form-data needs a boundary parameter"),
    );
    for (const b of ['""', "x".repeat(71), '"a b "', '"a\\"b"', "a\u00e9", '"a;b"']) {
      assert.throws(
        () => multipartBoundary(`multipart/form-data; boundary=${b}`),
        refused(400, /^Multipart boundary .* is not valid: 1 to 70 of /),
        b,
      );
    }
    assert.equal(multipartBoundary(`multipart/form-data; boundary=${"x".repeat(70)}`).length, 70);
  });
});
