// OTEL-07: with no OpenTelemetry SDK registered fw records nothing
// and adds nothing: no telemetry on the Ctx, no trace context, no traceparent sent upstream.
import { App, Controller, Ctx, Get, Header, Returns } from 'fw-http';
import { Client, OpenTarget, Target } from 'fw-http/fetch';

const Up = Target('up', {});

@Controller()
class Echo {
  @Get('/echo')
  @Returns(String)
  echo(@Header('traceparent') tp: string | null): string {
    return tp ?? 'none';
  }
}

@Controller()
class Front {
  constructor(readonly up: OpenTarget) {}

  @Get('/front')
  @Returns(String)
  async front(c: Ctx): Promise<string> {
    const res = await this.up.get(c, '/echo', {}, { headers: [] });
    return `${c.traceContext() === null}:${Buffer.from(res.bytes).toString()}`;
  }
}

describe('without an SDK (OTEL-07)', () => {
  it('OTEL-07: the request has no trace context and its calls send no traceparent', async () => {
    const up = new App({ log: () => {} }).controllers(Echo);
    const { url } = await up.listen({ port: 0 });
    const client = new Client();
    const app = new App({ log: () => {} })
      .controllers(Front)
      .provide(client)
      .provide(Up.open(client, { base: url }));
    try {
      const res = await app.inject({
        url: '/front',
        headers: { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' },
      });
      expect(res.body).toBe('true:none');
    } finally {
      await app.close();
      await up.close();
    }
  });
});
