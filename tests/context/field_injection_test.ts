import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { ApplicationContext } from "../../src/context/application_context.ts";
import { FOR_CLASS } from "../../src/context/field_injection.ts";
import type { Class } from "../../src/context/class.ts";
import { Autowired, Service } from "../../mod.ts";

// A bean that gives each class asking for it a value of its own, as the logging feature's does.
class Greeting {
  constructor(readonly to: string) {}

  [FOR_CLASS](cls: Class): Greeting {
    return new Greeting(cls.name);
  }
}

@Service()
class Host {
  @Autowired(Greeting)
  greeting!: Greeting;
}

@Service()
class Guest extends Host {}

describe("a bean's FOR_CLASS method", () => {
  it("gives each class whose field asks for the bean a value of its own; getBean the bean", async () => {
    const context = new ApplicationContext();
    context.registerBean({
      name: "greeting",
      type: Greeting,
      source: "test",
      create: () => Promise.resolve(new Greeting("everyone")),
    });
    context.register(Host);
    context.register(Guest);
    await context.refresh();
    assert.equal(context.getBean(Host).greeting.to, "Host");
    // The class constructed, whichever class's field it is.
    assert.equal(context.getBean(Guest).greeting.to, "Guest");
    assert.equal(context.getBean(Greeting).to, "everyone");
  });
});
