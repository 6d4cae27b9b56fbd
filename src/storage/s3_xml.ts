// The few XML documents S3 answers (a listing, an upload's id, a copy's or an upload's result, an
// error) read by a reader of their narrow shape rather than an XML package: elements, attributes
// (skipped), text, the five named entities and character references. What S3 never sends (a
// DOCTYPE, an entity of its own) is refused, so no answer can make the reader expand or fetch
// anything, and its cost stays linear in the text, which the caller bounds.

/** The most bytes of an S3 answer the driver reads as XML: a listing of 1,000 long keys fits. */
export const MAX_XML_BYTES: number = 16 * 1024 * 1024;

// Deeper than any S3 answer nests (a listing is 3 deep): what passes it is no S3 answer.
const MAX_DEPTH = 64;

/** One element of an S3 answer: its local name (no namespace prefix), its elements, its text. */
export interface XmlElement {
  /** The name without its prefix (`s3:Key` is `Key`). */
  readonly name: string;
  /** The elements right inside it, in order. */
  readonly children: readonly XmlElement[];
  /** The text right inside it, entities decoded, CDATA as written. */
  readonly text: string;
}

/** What the reader throws: the text is no XML of the shape S3 answers in. */
export class S3XmlError extends Error {
  /** An error saying what is malformed, and where. */
  constructor(message: string) {
    super(`S3 answered malformed XML: ${message}`);
    this.name = "S3XmlError";
  }
}

const NAMED: Readonly<Record<string, string>> = {
  amp: "&",
  lt: "<",
  gt: ">",
  quot: '"',
  apos: "'",
};

// The longest reference read: `&#x10FFFF;` is 10 characters, `&#1114111;` is 10.
const LONGEST_REFERENCE = 10;

/**
 * `text` with its references decoded: `&amp; &lt; &gt; &quot; &apos;`, `&#NN;` and `&#xNN;`. An
 * `&` that starts none of them, or a reference to a character XML 1.0 cannot hold, throws
 * {@linkcode S3XmlError}.
 */
export function decodeXmlText(text: string): string {
  let at = text.indexOf("&");
  if (at === -1) return text;
  let out = text.slice(0, at);
  while (at !== -1) {
    const end = text.indexOf(";", at);
    if (end === -1 || end - at > LONGEST_REFERENCE) {
      throw new S3XmlError(`an "&" that starts no reference, at ${at}`);
    }
    out += referenced(text.slice(at + 1, end));
    const next = text.indexOf("&", end + 1);
    out += text.slice(end + 1, next === -1 ? text.length : next);
    at = next;
  }
  return out;
}

function referenced(name: string): string {
  if (Object.hasOwn(NAMED, name)) return NAMED[name];
  const number = /^#(?:([0-9]{1,7})|x([0-9A-Fa-f]{1,6}))$/.exec(name);
  const code = number === null
    ? Number.NaN
    : number[1] === undefined
    ? Number.parseInt(number[2], 16)
    : Number.parseInt(number[1], 10);
  if (!xmlCharacter(code)) throw new S3XmlError(`an unknown reference "&${name.slice(0, 8)};"`);
  return String.fromCodePoint(code);
}

// The characters XML 1.0 may hold (its production `Char`).
function xmlCharacter(code: number): boolean {
  return code === 0x9 || code === 0xa || code === 0xd || (code >= 0x20 && code <= 0xd7ff) ||
    (code >= 0xe000 && code <= 0xfffd) || (code >= 0x10000 && code <= 0x10ffff);
}

const ESCAPES: Readonly<Record<string, string>> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&apos;",
};

/** `text` with `& < > " '` written as entities, for the text of an element the driver sends. */
export function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]);
}

// A name as XML writes one (ASCII only: S3's names are), prefix included.
const NAME = /[A-Za-z_][A-Za-z0-9_.:-]*/y;
const SPACE = /[ \t\r\n]*/y;

interface OpenElement {
  readonly name: string;
  readonly qualified: string;
  readonly children: XmlElement[];
  text: string;
}

/** The reader's place in the text, and the elements open there. */
class Reader {
  at = 0;
  readonly open: OpenElement[] = [];
  root: XmlElement | undefined;

  constructor(readonly text: string) {}

  fail(what: string): never {
    throw new S3XmlError(`${what}, at ${this.at}`);
  }

  // Past `marker`, which must come: the end of a comment, a CDATA section or a declaration.
  skipPast(marker: string, what: string): number {
    const end = this.text.indexOf(marker, this.at);
    if (end === -1) this.fail(`an unclosed ${what}`);
    const start = this.at;
    this.at = end + marker.length;
    return start;
  }

  name(): string {
    NAME.lastIndex = this.at;
    const match = NAME.exec(this.text);
    if (match === null) this.fail("a tag with no name");
    this.at = NAME.lastIndex;
    return match[0];
  }

  space(): boolean {
    SPACE.lastIndex = this.at;
    SPACE.exec(this.text);
    const moved = SPACE.lastIndex > this.at;
    this.at = SPACE.lastIndex;
    return moved;
  }

  characters(raw: string): void {
    const top = this.open.at(-1);
    if (top !== undefined) top.text += decodeXmlText(raw);
    else if (raw.trim() !== "") this.fail("text outside the root element");
  }

  // A start tag from its `<`: its attributes skipped, linear in its length whatever it holds.
  startTag(): void {
    if (this.root !== undefined) this.fail("a second root element");
    if (this.open.length >= MAX_DEPTH) this.fail(`elements nested deeper than ${MAX_DEPTH}`);
    this.at += 1;
    const qualified = this.name();
    for (;;) {
      const spaced = this.space();
      if (this.text.startsWith("/>", this.at) || this.text.startsWith(">", this.at)) break;
      if (!spaced) this.fail("an attribute not after a space");
      this.name();
      this.space();
      if (this.text[this.at] !== "=") this.fail("an attribute with no value");
      this.at += 1;
      this.space();
      const quote = this.text[this.at];
      if (quote !== '"' && quote !== "'") this.fail("an attribute value not in quotes");
      const end = this.text.indexOf(quote, this.at + 1);
      if (end === -1 || this.text.slice(this.at, end).includes("<")) this.fail("a broken tag");
      this.at = end + 1;
    }
    const selfClosing = this.text[this.at] === "/";
    this.at += selfClosing ? 2 : 1;
    const name = qualified.slice(qualified.indexOf(":") + 1);
    this.open.push({ name, qualified, children: [], text: "" });
    if (selfClosing) this.close();
  }

  endTag(): void {
    this.at += 2;
    const qualified = this.name();
    this.space();
    if (this.text[this.at] !== ">") this.fail("a broken end tag");
    this.at += 1;
    if (this.open.at(-1)?.qualified !== qualified) this.fail(`an end tag that closes nothing`);
    this.close();
  }

  close(): void {
    const { name, children, text } = this.open.pop()!;
    const element: XmlElement = { name, children, text };
    const parent = this.open.at(-1);
    if (parent === undefined) this.root = element;
    else parent.children.push(element);
  }

  // One markup construct from its `<`.
  markup(): void {
    const { text, at } = this;
    if (text.startsWith("<?", at)) this.skipPast("?>", "processing instruction");
    else if (text.startsWith("<!--", at)) this.skipPast("-->", "comment");
    else if (text.startsWith("<![CDATA[", at)) {
      if (this.open.length === 0) this.fail("CDATA outside the root element");
      this.at += 9;
      const start = this.skipPast("]]>", "CDATA section");
      this.open.at(-1)!.text += text.slice(start, this.at - 3);
    } else if (text.startsWith("<!", at)) this.fail("a declaration (S3 sends no DOCTYPE)");
    else if (text.startsWith("</", at)) this.endTag();
    else this.startTag();
  }
}

/**
 * The root element of `text`, an S3 answer. Throws {@linkcode S3XmlError}, and nothing else, when
 * `text` is no well-formed XML of that shape: no root, an unclosed element, a DOCTYPE, an unknown
 * entity, elements nested deeper than 64.
 */
export function readXml(text: string): XmlElement {
  const reader = new Reader(text.startsWith("\ufeff") ? text.slice(1) : text);
  const source = reader.text;
  while (reader.at < source.length) {
    const next = source.indexOf("<", reader.at);
    const end = next === -1 ? source.length : next;
    reader.characters(source.slice(reader.at, end));
    reader.at = end;
    if (next !== -1) reader.markup();
  }
  if (reader.open.length > 0) reader.fail(`an unclosed element <${reader.open.at(-1)!.qualified}>`);
  const { root } = reader;
  if (root === undefined) throw new S3XmlError("no root element");
  return root;
}

/** The first element named `name` right inside `element`, if any. */
export function childNamed(element: XmlElement, name: string): XmlElement | undefined {
  return element.children.find((child) => child.name === name);
}

/** The text of the first element named `name` right inside `element`, if there is one. */
export function childText(element: XmlElement, name: string): string | undefined {
  return childNamed(element, name)?.text;
}

/** What an S3 `<Error>` answer says: its `Code` and `Message` ("" for one it lacks). */
export interface S3ErrorBody {
  /** S3's error code: `NoSuchKey`, `SlowDown`... */
  readonly code: string;
  /** S3's words. */
  readonly message: string;
}

/** The `Code` and `Message` of `root` when it is an S3 `<Error>` document, else `undefined`. */
export function errorIn(root: XmlElement): S3ErrorBody | undefined {
  if (root.name !== "Error") return undefined;
  return { code: childText(root, "Code") ?? "", message: childText(root, "Message") ?? "" };
}

/** The `Code` and `Message` of `text` when it is an S3 `<Error>` document, else `undefined`. */
export function s3ErrorOf(text: string): S3ErrorBody | undefined {
  try {
    return errorIn(readXml(text));
  } catch (error) {
    if (error instanceof S3XmlError) return undefined;
    throw error;
  }
}
