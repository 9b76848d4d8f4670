import { IsIn, IsInt, IsISO8601, IsString, Length, Max, Min } from 'class-validator';

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
  @IsString() account!: string;
  @IsIn(['placed', 'cancelled']) status!: 'placed' | 'cancelled';
  @IsISO8601() createdAt!: string;

  static of(fields: Omit<Order, never>): Order {
    return Object.assign(new Order(), fields);
  }
}

/** The typed 409 of cancelling an order twice. */
export class AlreadyCancelled {
  @IsIn(['already cancelled']) reason!: 'already cancelled';
  @IsString() orderId!: string;

  static of(orderId: string): AlreadyCancelled {
    return Object.assign(new AlreadyCancelled(), { reason: 'already cancelled' as const, orderId });
  }
}
