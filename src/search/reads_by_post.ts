// The reads whose body a GET carries and that POST answers the same: a GET with a body goes as
// POST where the transport (`fetch`) cannot send it. Index names never start with `_` (but
// `_all`), so a document or a route of another kind never matches: `POST /products/_doc/_search`
// would index a document.
const READ_BY_POST = new RegExp(
  [
    "^(?:/(?:[^/_][^/]*|_all))?/(?:_search|_count|_msearch|_field_caps|_mget|_mtermvectors|" +
    "_rank_eval|_analyze|_validate/query|_search/template|_msearch/template)/?$",
    "^/_search/scroll(?:/[^/]+)?/?$",
    "^/_render/template(?:/[^/]+)?/?$",
    "^/[^/_][^/]*/(?:_explain|_termvectors)(?:/[^/]+)?/?$",
    "^/_cluster/allocation/explain/?$",
    "^/_scripts/painless/_execute/?$",
  ].join("|"),
);

/**
 * Whether `path` (the client's, without the query) is a read that POST answers as GET does with
 * the same body: `_search`, `_count`, `_msearch`, scroll, templates and the like.
 */
export function readsByPost(path: string): boolean {
  return READ_BY_POST.test(path.replace(/^\/*/, "/"));
}
