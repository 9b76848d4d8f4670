import { IsInt, IsString, Min } from 'class-validator';
import { App, Body, Controller, Idempotent, Post, Returns, Status } from 'fw-http';
import type { SpaceDecl, Store } from 'fw-http/cache';

// What the Redis Cluster and Sentinel specs share: an app whose one route is idempotent over the
// store under test, and a request to it (each request's sku is its Idempotency-Key).

export class NewOrder {
  @IsString() sku!: string;
  @IsInt() @Min(1) qty!: number;
}

/**
 * An app whose POST /orders is @Idempotent(`space`) over `store`; `runs` counts handler runs per
 * sku, and the answer's sku is `made(sku, n)` for the n-th run of that sku.
 */
export function ordersApp(
  space: SpaceDecl,
  store: Store,
  runs: Map<string, number>,
  made: (sku: string, n: number) => string,
): App {
  @Controller()
  class Orders {
    @Post('/orders')
    @Idempotent(space)
    @Returns(Status(201, NewOrder))
    create(@Body() order: NewOrder) {
      const n = (runs.get(order.sku) ?? 0) + 1;
      runs.set(order.sku, n);
      return { sku: made(order.sku, n), qty: order.qty };
    }
  }
  return new App({ log: () => {} }).controllers(Orders).provide(space.open(store));
}

/** POST /orders of one order of `key`, with `key` as its Idempotency-Key. */
export async function postOrder(
  url: string,
  key: string,
): Promise<{ status: number; replayed: string | null; body: string }> {
  // Bounded, so a request the server never answers fails naming its key, not the test's timeout.
  const res = await fetch(`${url}/orders`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'idempotency-key': key },
    body: JSON.stringify({ sku: key, qty: 1 }),
    signal: AbortSignal.timeout(15_000),
  }).catch((err: unknown) => {
    throw new Error(`POST /orders with Idempotency-Key ${key}: ${String(err)}`, { cause: err });
  });
  return {
    status: res.status,
    replayed: res.headers.get('idempotent-replayed'),
    body: await res.text(),
  };
}
