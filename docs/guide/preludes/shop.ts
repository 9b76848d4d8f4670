// The guide's examples are parts of one shop service. A block marked `<!-- prelude: shop -->` is
// checked with the names below in scope (only those it uses and does not declare itself): every
// door of fw (a block that is not a class's members imports a subpath door's names itself, so the
// reader sees the door), class-validator's decorators, zod, and the shop's own classes, services
// and values that the guide's pages refer to without writing them out each time.
import 'reflect-metadata';
import {
  IsEmail,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  Length,
  Max,
  Min,
  ValidateNested,
} from 'class-validator';
import { Type } from 'class-transformer';
import type { Writable } from 'node:stream';
import { z } from 'zod';
import type { Generated } from 'kysely';
import { EventStream, Get, Query, Returns, Run, fail, Controller, type Ctx } from 'fw-http';
import type { Tx } from 'fw-http/atomic';
import { MemoryStore, Space } from 'fw-http/cache';
import { Client, Target, type OpenTarget } from 'fw-http/fetch';

export * from 'fw-http';
export * from 'fw-http/atomic';
export * from 'fw-http/browser';
export * from 'fw-http/cache';
export * from 'fw-http/capabilities';
export * from 'fw-http/fetch';
export * from 'fw-http/files';
export * from 'fw-http/jwt';
export * from 'fw-http/mcp';
export * from 'fw-http/openapi';
export * from 'fw-http/uploads';
export * from 'fw-http/ws';
export * from 'class-validator';
export { Type, z };

/** What `POST /orders` reads. */
export class NewOrder {
  @IsString() @Length(1, 32) sku!: string;
  @IsInt() @Min(1) @Max(100) qty!: number;
}

/** An order as the shop answers it. */
export class Order {
  @IsString() id!: string;
  @IsString() sku!: string;
  @IsInt() qty!: number;
  @IsIn(['placed', 'cancelled']) status!: 'placed' | 'cancelled';
}

/** The typed 409 of cancelling an order twice. */
export class AlreadyCancelled {
  @IsIn(['already cancelled']) reason!: 'already cancelled';
  @IsString() orderId!: string;
  static of(orderId: string): AlreadyCancelled {
    return Object.assign(new AlreadyCancelled(), { reason: 'already cancelled' as const, orderId });
  }
}

/** The caller, worked out from the bearer token once per request. */
export class Account {
  static authorization = 'bearer' as const;
  constructor(readonly id: string) {}
  static resolve(c: Ctx): Account {
    if (c.authorization('bearer').value !== 'alice-token')
      throw fail.challenge('bearer', 'unknown bearer token');
    return new Account('alice');
  }
}

/** An order with the version its ETag is made of. */
export interface Entry {
  readonly version: number;
  readonly order: Order;
}

/** The shop's orders: a service provided once and filled in by type. */
export declare class OrderBook {
  readonly size: number;
  place(account: string, order: NewOrder): Order;
  find(id: string): Entry | undefined;
  list(account: string): Order[];
  all(): Order[];
}

/** What a transfer answers. */
export class Receipt {
  @IsString() from!: string;
  @IsString() to!: string;
  @IsInt() amount!: number;
}

/** What a payment answers: the bank's charge and the receipt mail. */
export class Paid {
  @IsString() charge!: string;
  @IsString() mail!: string;
}

export class Booking {
  @IsString() id!: string;
}

export class Transfer {
  @IsString() from!: string;
  @IsString() to!: string;
  @IsInt() amount!: number;
}

export class StockLevel {
  @IsString() sku!: string;
  @IsInt() available!: number;
}

/** The members a controller of the guide's `ts members` blocks has. */
export declare class ExampleController {
  readonly book: OrderBook;
  readonly map: Map<string, Order>;
  readonly db: {
    user(
      id: string,
    ): Promise<{ id: string; name: string; nickname?: string; passwordHash: string }>;
    insert<T extends object>(row: T): T & { id: string };
  };
  readonly rooms: { find(id: string): Promise<Room | null> };
}

export class Message {
  @IsString() text!: string;
}

export interface Room {
  messages(): AsyncIterable<Message>;
}

/** A sign-up form and what the shop does with it. */
export class Signup {
  @IsString() @Length(1, 64) name!: string;
  @IsEmail() email!: string;
}
export declare function signupPage(fields: object, errors: object): string;
export declare function register(s: Signup): string;

export class Login {
  @IsString() account!: string;
}

export class Quote {
  @IsInt() price!: number;
}

export class Refused {
  @IsString() reason!: string;
}

export const NewUser = z.object({ name: z.string() });

export class TreeNode {
  @IsString() name!: string;
  @IsOptional() @ValidateNested() @Type(() => TreeNode) child?: TreeNode;
}

@Controller('/tree')
export class TreeController {}

export class Circle {
  @IsInt() r: number;
  constructor(r: number) {
    this.r = r;
  }
}
export class Square {
  @IsInt() side!: number;
}

export class OrderV1 {
  @IsString() id!: string;
}

export class Payment {
  @IsString() card!: string;
  @IsInt() amount!: number;
  @IsEmail() email!: string;
}

export class BulkOrders {
  @ValidateNested({ each: true }) @Type(() => NewOrder) orders!: NewOrder[];
}

export class EventsQuery {
  @IsOptional() @IsInt() @Min(1) @Max(100) count?: number;
}

export class Tick {
  @IsInt() n!: number;
  static of(n: number): Tick {
    return Object.assign(new Tick(), { n });
  }
}

@Controller()
export class LiveController {
  @Get('/events')
  @Returns(EventStream.of(Tick))
  async *events(@Query() q: EventsQuery): AsyncGenerator<Tick> {
    for (let n = 1; n <= (q.count ?? 3); n++) yield Tick.of(n);
  }
}

/** The tables of a kysely `Database`. */
export interface Database {
  orders: { id: Generated<number>; sku: string; qty: number };
}

@Controller('/orders')
export class OrdersController {}
@Controller('/catalog')
export class CatalogController {}
@Controller('/transfers')
export class TransfersController {}
@Controller('/stock')
export class StockController {}

export const Payments = Space('payments', { ttlSeconds: 86_400, maxBytes: 16 * 1024 });
export const byAccount = (c: Ctx): string => c.resolve(Account).id;
export const TOKENS: Record<string, string> = { 'alice-token': 'alice' };
export const Orders = Space('orders', { ttlSeconds: 86_400, maxBytes: 64 * 1024 });
export const Warehouse = Target('warehouse', {
  timeoutMs: 5_000,
  maxInFlight: 16,
  ready: '/ready',
});

/** What a page's example has at hand: the app, a request's Ctx, the services. */
export declare const app: import('fw-http').App;
export declare const c: Ctx;
export declare const tx: Tx;
export declare const book: OrderBook;
export declare const client: Client;
export declare const warehouse: OpenTarget;
export declare const store: MemoryStore;
export declare const sku: string;
export declare const key: string;
export declare const amount: number;
export declare const account: string;
export declare const charge: { amount: number; card: string };
export declare const payments: OpenTarget;
export declare const shop: OpenTarget;
export declare const document: import('fw-http/fetch').ClientDocument;
export declare const run: Run;
export declare const db: {
  query(sql: string, values: unknown[]): Promise<{ rowCount: number | null }>;
};
export declare const bank: { charge(card: string, amount: number): Promise<{ id: string }> };
export declare const mailer: { send(to: string, chargeId: string): Promise<{ id: string }> };
export declare const bucket: { writeStream(name: string): Writable };
export declare const metrics: { observe(route: string, status: number, ms: number): void };
export declare const traceExporter: unknown;
export declare const metricReader: unknown;
export declare const qty: number;
