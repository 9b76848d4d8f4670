import { App, logger } from 'fw';
import { CatalogController } from './catalog-controller';
import { OrderBook } from './order-book';
import { OrdersController } from './orders-controller';

export interface ShopOptions {
  readonly log?: (line: string) => void;
}

/** The shop service: every capability of fw, used as a program would. */
export function shop(options: ShopOptions = {}): App {
  return new App({ title: 'fw sample shop', version: '1.0.0', log: options.log })
    .use(logger.with({ format: 'json', requestId: true }))
    .provide(new OrderBook())
    .controllers(OrdersController, CatalogController)
    .health('/healthz');
}
