// A live feed as an app writes one: an `@SseMapping` stream and a `@WebSocketMapping` socket per
// room, each subscribed to the room's channel, served by `listen` on a port of its own.
import {
  Autowired,
  bootstrap,
  PathVariable,
  RestController,
  SseMapping,
  type WebSocketHandlers,
  WebSocketMapping,
} from "../../mod.ts";
import { Broadcaster, type BroadcastSubscription } from "../../broadcast.ts";
import { listen, type Server } from "../../server.ts";
import { memoryLogger } from "../helpers.ts";

@RestController()
export class Live {
  @Autowired(Broadcaster)
  broadcaster!: Broadcaster;

  @SseMapping("/rooms/{room}/feed", PathVariable("room"))
  feed(room: string): BroadcastSubscription {
    return this.broadcaster.subscribe(`room:${room}`);
  }

  @WebSocketMapping("/rooms/{room}/socket", PathVariable("room"))
  socket(room: string): WebSocketHandlers {
    return this.broadcaster.socket(`room:${room}`);
  }

  // A socket that follows the channel its client names last.
  @WebSocketMapping("/lobby")
  lobby(): WebSocketHandlers {
    let leave = () => {};
    return {
      onMessage: (event, ws) => {
        leave();
        leave = this.broadcaster.join(String(event.data), ws);
      },
      onClose: () => leave(),
    };
  }
}

/** One replica of the app, listening. */
export interface Replica {
  readonly server: Server;
  readonly port: number;
  readonly base: string;
  readonly broadcaster: Broadcaster;
  readonly logger: ReturnType<typeof memoryLogger>;
  /** The lines logged so far. */
  lines(): string[];
}

/** Starts a replica whose configuration is `config` (its `thaw.broadcast` and `server` keys). */
export async function startReplica(config: Record<string, unknown> = {}): Promise<Replica> {
  const logger = memoryLogger();
  const app = await bootstrap({
    controllers: [Live],
    config,
    logger,
  });
  const server = await listen(app, { port: 0, hostname: "127.0.0.1", signals: false, quiet: true });
  return {
    server,
    port: server.port,
    base: `http://127.0.0.1:${server.port}`,
    broadcaster: app.getBean(Broadcaster),
    logger,
    lines: () => logger.lines.map(([line]) => String(line)),
  };
}
