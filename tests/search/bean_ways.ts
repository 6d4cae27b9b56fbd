// The ways a SearchClient bean's requests go out, for the tests that run each call on each: the
// runtime's default (node:http on Node; on Deno, node:http for plain HTTP; Bun's fetch), the
// runtime's fetch (which a proxy in the environment keeps the bean on, on Deno; the host is
// exempt from it, so it goes direct), and node:http, which `proxy: false` takes everywhere.
import process from "node:process";
import { type Application, bootstrap } from "../../mod.ts";
import { search } from "../../search.ts";

/** One way out: the entry's keys, and the environment the bean is made in. */
export interface BeanWay {
  readonly name: string;
  readonly entry: Readonly<Record<string, unknown>>;
  readonly env?: Readonly<Record<string, string>>;
}

export const WAYS: readonly BeanWay[] = [
  { name: "the runtime's default transport", entry: {} },
  {
    name: "the runtime's fetch, a proxy in the environment",
    entry: {},
    // The discard port: a request that went to the proxy fails loudly.
    env: { HTTP_PROXY: "http://127.0.0.1:9", NO_PROXY: "127.0.0.1,localhost" },
  },
  { name: "the node:http transport", entry: { proxy: false } },
];

/** An app with one `search:` entry, `main`, of `entry`'s keys, made in `way`'s environment. */
export async function started(
  entry: Record<string, unknown>,
  way?: BeanWay,
): Promise<Application> {
  const saved = Object.keys(way?.env ?? {}).map((name) => [name, process.env[name]] as const);
  Object.assign(process.env, way?.env);
  try {
    return await bootstrap({
      config: { search: [{ name: "main", ...entry, ...way?.entry }] },
      search: search(),
    });
  } finally {
    for (const [name, value] of saved) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
}
