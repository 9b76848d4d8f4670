import { IsInt, IsOptional, Max, Min } from 'class-validator';
import { Controller, Ctx, EventStream, Get, Query, Returns } from 'fw-http';
import { WebSocketRoute, type UpgradeLoop } from 'fw-http/ws';

export class EventsQuery {
  /** How many events to send: 1..100, default 3. */
  @IsOptional() @IsInt() @Min(1) @Max(100) count?: number;
}

/** One event of `GET /events`: its data is `{"n":i}`. */
export class Tick {
  @IsInt() n!: number;

  static of(n: number): Tick {
    return Object.assign(new Tick(), { n });
  }
}

/** Sends back every message as it came: text as text, binary as binary. */
const echo: UpgradeLoop<null> = (ws) => {
  ws.on('message', (data, binary) => ws.send(data, { binary }));
};

/**
 * The sample's own origins, worked out per handshake from the port the connection arrived on:
 * the shop learns its port only at listen (PORT=0 picks one), so a fixed list cannot name it.
 */
const sameService = (origin: string, at: { readonly port: number }): boolean =>
  origin === `http://127.0.0.1:${at.port}` || origin === `http://localhost:${at.port}`;

/** Live answers: server-sent events and a WebSocket echo. */
@Controller()
export class LiveController {
  /** `count` events `data: {"n":i}`, i = 1..count, then the stream ends. */
  @Get('/events', { summary: 'server-sent events: count events {"n":i}, then the end' })
  @Returns(EventStream.of(Tick))
  async *events(@Query() q: EventsQuery): AsyncGenerator<Tick> {
    for (let n = 1; n <= (q.count ?? 3); n++) yield Tick.of(n);
  }

  @WebSocketRoute('/ws/echo', {
    origins: sameService,
    summary: 'WebSocket echo (origins: this service on 127.0.0.1 or localhost)',
  })
  echo(c: Ctx): void {
    c.upgrade(echo, null);
  }
}
