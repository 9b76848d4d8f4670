// The fw side of issue 28's footprint goals: the two routes of bench/fastify.ts (GET /small,
// POST /orders validated by class-validator) and nothing else, so each process holds what those
// two routes need and no more.
import { IsInt, IsString, Length, Max, Min } from 'class-validator';
import { App, Body, Controller, Get, Post, Returns, Status } from 'fw-http';
import { SMALL, Small } from './data';

class NewOrder {
  @IsString() @Length(1, 32) sku!: string;
  @IsInt() @Min(1) @Max(100) qty!: number;
}

@Controller()
class TwoRoutes {
  @Get('/small')
  @Returns(Small)
  small() {
    return SMALL;
  }

  @Post('/orders')
  @Returns(Status(201, NewOrder))
  create(@Body() order: NewOrder) {
    return order;
  }
}

/** GET /small and POST /orders, the same answers as Fastify's app. */
export const twoRoutesApp = (keepAliveMs?: number): App =>
  new App({ log: () => {}, keepAliveTimeoutMs: keepAliveMs }).controllers(TwoRoutes);
