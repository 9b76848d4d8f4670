import { Body, Controller, Get, Post, Reply, Returns, headers } from 'fw';
import { Account } from './account';
import { NewOrder, Order } from './order';
import { OrderBook } from './order-book';

@Controller('/orders')
export class OrdersController {
  constructor(readonly book: OrderBook) {}

  @Post()
  @Returns(Reply(Order, { statuses: [201] }))
  create(@Body() order: NewOrder, account: Account) {
    const placed = this.book.place(account.id, order.sku, order.qty);
    return { status: 201, headers: headers.of([{ name: 'Location', value: `/orders/${placed.id}` }]), value: placed };
  }

  @Get()
  @Returns([Order])
  list(account: Account): Order[] {
    return this.book.list(account.id);
  }
}
