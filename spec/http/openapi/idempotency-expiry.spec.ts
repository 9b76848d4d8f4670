import { App, Controller, Idempotent, Post, Returns, Status } from 'fw-http';
import { MemoryStore, Space } from 'fw-http/cache';

// The IETF Idempotency-Key draft asks a resource to publish how long its keys are kept (§2.3):
// each idempotent operation says it in the key's description and as an x- member.

class Made {
  id!: string;
}
const Orders = Space('expiry-orders', { ttlSeconds: 86_400, maxBytes: 4096 });

@Controller('/orders')
class OrdersController {
  @Post() @Idempotent(Orders) @Returns(Status(201, Made)) create() {
    return { id: 'o1' };
  }
}

it('an idempotent operation publishes its space expiry, in the key description and x-idempotency-key-expiry-seconds', () => {
  const app = new App({ log: () => {} })
    .controllers(OrdersController)
    .provide(Orders.open(new MemoryStore({ bytes: 1 << 20 })));
  const doc = app.document() as unknown as {
    paths: Record<
      string,
      Record<
        string,
        { parameters: { name: string; description: string }[] } & Record<string, unknown>
      >
    >;
  };
  const op = doc.paths['/orders']!.post!;
  expect(op['x-idempotency-key-expiry-seconds']).toBe(86_400);
  const key = op.parameters.find((p) => p.name === 'Idempotency-Key')!;
  expect(key.description).toContain('Answers are kept 86400 s after the first.');
});
