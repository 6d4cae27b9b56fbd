// The `server.websocket.*` keys as the feature reads them.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { bootstrap, RestController, WebSocketMapping } from "../../mod.ts";
import { readSettings } from "../../src/config/thaw_settings.ts";
import { resolveConfig } from "../../src/config/application_config.ts";
import { ConfigError } from "../../src/config/config_error.ts";
import {
  DEFAULT_MAX_BUFFERED,
  DEFAULT_MAX_MESSAGE_SIZE,
  webSocketSettings,
} from "../../src/web/websocket_settings.ts";

const settings = (websocket: unknown, env: Record<string, string> = {}) =>
  readSettings(resolveConfig({ server: { websocket } }, (name) => env[name]));

describe("server.websocket.*", () => {
  it("is 1 MiB a message, 16 MiB waiting to be sent, and no other origin unless set", () => {
    assert.deepEqual(webSocketSettings(readSettings(resolveConfig({}, () => undefined))), {
      maxMessageSize: DEFAULT_MAX_MESSAGE_SIZE,
      maxBuffered: DEFAULT_MAX_BUFFERED,
      allowedOrigins: [],
    });
    assert.equal(DEFAULT_MAX_MESSAGE_SIZE, 1024 * 1024);
    assert.equal(DEFAULT_MAX_BUFFERED, 16 * 1024 * 1024);
  });

  it("reads a size and origins from the file and from the environment", () => {
    assert.deepEqual(
      webSocketSettings(
        settings({
          "max-message-size": 4096,
          "max-buffered": 8192,
          "allowed-origins": ["https://A.example", "*"],
        }),
      ),
      { maxMessageSize: 4096, maxBuffered: 8192, allowedOrigins: ["https://a.example", "*"] },
    );
    assert.deepEqual(
      webSocketSettings(settings(undefined, {
        SERVER_WEBSOCKET_MAX_MESSAGE_SIZE: "65536",
        SERVER_WEBSOCKET_MAX_BUFFERED: "1048576",
        SERVER_WEBSOCKET_ALLOWED_ORIGINS: "https://a.example, http://b.example:8080",
      })),
      {
        maxMessageSize: 65536,
        maxBuffered: 1048576,
        allowedOrigins: ["https://a.example", "http://b.example:8080"],
      },
    );
  });

  it("refuses a size that is no whole number of bytes, naming the key", () => {
    for (const key of ["max-message-size", "max-buffered"]) {
      for (const size of [0, -1, 1.5, "1MB", true, [1]]) {
        assert.throws(() => webSocketSettings(settings({ [key]: size })), {
          name: "ConfigError",
          message: `config: server.websocket.${key} must be a whole number of bytes, ` +
            `at least 1, got ${JSON.stringify(size)}`,
        });
      }
    }
  });

  it("refuses what is not an origin, naming the key and the value", () => {
    for (const origin of ["app.example", "https://app.example/path", 7]) {
      assert.throws(() => webSocketSettings(settings({ "allowed-origins": [origin] })), {
        name: "ConfigError",
        message: `config: server.websocket.allowed-origins: ${JSON.stringify(origin)} is not ` +
          'an origin (scheme://host[:port], as https://app.example.com; "*": any)',
      });
    }
    assert.throws(() => webSocketSettings(settings({ "allowed-origins": { a: 1 } })), ConfigError);
  });

  it("stops bootstrap of an app that maps a socket, and a typo of a key", async () => {
    @RestController()
    class Sockets {
      @WebSocketMapping("/ws")
      ws() {
        return {};
      }
    }
    await assert.rejects(
      bootstrap({
        controllers: [Sockets],
        config: { server: { websocket: { "max-message-size": "big" } } },
      }),
      ConfigError,
    );
    assert.throws(() => settings({ "max-mesage-size": 1 }), {
      message: "config: server.websocket.max-mesage-size: unknown key; did you mean " +
        "server.websocket.max-message-size?",
    });
  });
});
