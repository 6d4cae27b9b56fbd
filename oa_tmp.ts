import { bootstrap } from "./mod.ts";
import { openApiDocument } from "./openapi.ts";
import { Live } from "./tests/fixtures/streaming_controllers.ts";
const app = await bootstrap({ controllers: [Live] });
console.log(JSON.stringify((await openApiDocument(app)).paths, null, 1));
