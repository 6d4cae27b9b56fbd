// The app the data tests bootstrap: their components, with data access on one datasource.
import { type Application, bootstrap, type BootstrapOptions } from "../../mod.ts";
import { data } from "../../data.ts";

/** An app of `components` whose one datasource is `entry` (a datasourceEntries() entry). */
export function dataApp(
  entry: Record<string, unknown>,
  components: BootstrapOptions["components"] = [],
): Promise<Application> {
  return bootstrap({ config: { datasource: [entry] }, components, data: data() });
}
