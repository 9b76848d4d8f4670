// NestJS on Fastify (@nestjs/platform-fastify) serving the two routes of bench/fastify.ts as a
// Nest user writes them: a controller, a DTO checked by class-validator through the global
// ValidationPipe, Nest's logger off. Nest 12 is ESM; node 20.19+ loads it through require().
import 'reflect-metadata';
import { Body, Controller, Get, Module, Post, ValidationPipe } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { IsInt, IsString, Length, Max, Min } from 'class-validator';
import { SMALL } from './data';

class NewOrder {
  @IsString() @Length(1, 32) sku!: string;
  @IsInt() @Min(1) @Max(100) qty!: number;
}

@Controller()
class TwoRoutes {
  @Get('/small')
  small() {
    return SMALL;
  }

  // Nest answers a POST with 201 unless told otherwise.
  @Post('/orders')
  create(@Body() order: NewOrder) {
    return { sku: order.sku, qty: order.qty };
  }
}

@Module({ controllers: [TwoRoutes] })
class BenchModule {}

/** The Nest app on Fastify, listening on 127.0.0.1 at an ephemeral port: its port. */
export async function listenNest(keepAliveMs?: number): Promise<number> {
  const app = await NestFactory.create<NestFastifyApplication>(
    BenchModule,
    new FastifyAdapter(keepAliveMs ? { keepAliveTimeout: keepAliveMs } : {}),
    { logger: false },
  );
  app.useGlobalPipes(new ValidationPipe({ whitelist: true }));
  await app.listen(0, '127.0.0.1');
  const address = app.getHttpServer().address();
  return typeof address === 'object' && address !== null ? address.port : 0;
}
