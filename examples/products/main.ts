// The products example: `deno run -A examples/products/main.ts` (or `bun`, or
// `node --import tsx`) with the OpenSearch node of `tools/opensearch.sh start`. It migrates the
// `products` index and alias, then serves on server.port (8081) until SIGTERM or Ctrl-C:
//   curl -X PUT localhost:8081/products/1 -H content-type:application/json \
//     -d '{"name":"red kettle","price":35}'
//   curl 'localhost:8081/products?q=kettle'
import { listen } from "../../server.ts";
import { productsApp } from "./app.ts";

await listen(await productsApp((line) => console.log(line)));
