// The zod side of the footprint goals: the two routes of bench/fastify.ts with the body and the
// answers declared by zod schemas (Standard Schema), no class-validator class anywhere, so the
// process holds what an app validating with zod alone holds.
import { z } from 'zod';
import { App, Body, Controller, Get, Post, Returns, Status, type Infer } from 'fw-http';
import { SMALL } from './data';

const Small = z.object({ id: z.number().int(), name: z.string(), tags: z.array(z.string()) });
const NewOrder = z.object({
  sku: z.string().min(1).max(32),
  qty: z.number().int().min(1).max(100),
});

@Controller()
class TwoRoutes {
  @Get('/small')
  @Returns(Small)
  small() {
    return SMALL;
  }

  @Post('/orders')
  @Returns(Status(201, NewOrder))
  create(@Body(NewOrder) order: Infer<typeof NewOrder>) {
    return order;
  }
}

/** GET /small and POST /orders, the same answers as Fastify's app, validated by zod. */
export const twoRoutesZodApp = (keepAliveMs?: number): App =>
  new App({ log: () => {}, keepAliveTimeoutMs: keepAliveMs }).controllers(TwoRoutes);
