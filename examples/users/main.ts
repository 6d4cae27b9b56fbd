// The sample users app: `deno task users` from the repository root.
import { bootstrap } from "../../mod.ts";

const app = await bootstrap({ config: new URL("./application.yml", import.meta.url) });
const server = await app.listen();
console.log(`users app listening on ${server.url}`);
