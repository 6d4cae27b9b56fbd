// A search connection's client as a bean closes after the beans that use it: a @PreDestroy of a
// bean that uses it still reaches the real node, and a request after the app closed finds no
// connection left.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Client } from "@opensearch-project/opensearch";
import { Autowired, Bean, bootstrap, Configuration, PreDestroy, Service } from "../../mod.ts";
import { closedAfterBeans, closeSearchClient } from "../../src/search/search_close.ts";
import { OPENSEARCH_URL } from "../migrate/search/cluster.ts";

describe("closedAfterBeans", () => {
  it("closes the client after the beans that use it", async () => {
    const Closing = closedAfterBeans(Client);
    assert.equal(closedAfterBeans(Client), Closing);
    @Configuration()
    class Connections {
      @Bean()
      catalog(): Client {
        return new Closing({ node: OPENSEARCH_URL });
      }
    }
    let seen: string | undefined;
    @Service()
    class Reporter {
      @Autowired("catalog")
      client!: Client;
      @PreDestroy()
      async report(): Promise<void> {
        seen = (await this.client.cluster.health()).body.status;
      }
    }
    const app = await bootstrap({ components: [Connections, Reporter] });
    const client = app.getBean<Client>("catalog");
    assert.ok(client instanceof Client);
    await app.close();
    assert.ok(seen === "green" || seen === "yellow", String(seen));
    await assert.rejects(client.cluster.health(), { name: "NoLivingConnectionsError" });
    // A second close, as a test's own clean-up may do, is harmless.
    await closeSearchClient(client);
  });
});
