// Run by spec/http/lazy-loading.spec.ts like lazy-loading.fixture.ts, in a fresh node each
// scenario. It imports neither class-validator nor class-transformer (only types), so whatever of
// them is loaded, fw loaded it, or the scenario did as an app's own classes would.
import type * as ClassValidator from 'class-validator';
import { z } from 'zod';
import { App, Body, Controller, Get, Page, Post, Problem, Returns, Status } from '../../lib/http';
import type { Infer } from '../../lib/http';
import { unspell } from '../../lib/json';

/** class-validator, class-transformer and what class-validator brings (validator.js, libphonenumber-js). */
export const VALIDATION = [
  'class-validator',
  'class-transformer',
  'validator',
  'libphonenumber-js',
] as const;

/** The packages of VALIDATION with at least one file in require.cache. */
export function loaded(): string[] {
  const files = Object.keys(require.cache);
  return VALIDATION.filter((name) => files.some((f) => f.includes(`/node_modules/${name}/`)));
}

const NewOrder = z.object({
  sku: z.string().min(1).max(32),
  qty: z.number().int().min(1).max(100),
});
const Small = z.object({ id: z.number().int(), name: z.string() });

/** A class with no decorators at all, paged: its fields are written as any JSON. */
class Row {
  id = 0;
}

@Controller()
class ZodOrders {
  @Get('/small')
  @Returns(Small)
  small() {
    return { id: 1, name: 'a' };
  }

  @Post('/orders')
  @Returns(Status(201, NewOrder))
  create(@Body(NewOrder) order: Infer<typeof NewOrder>) {
    return order;
  }

  @Get('/rows')
  @Returns(Page(Row))
  rows() {
    return { items: [{ id: 1 }], total: 1, next: null };
  }
}

const json = { 'content-type': 'application/json' };
type Schema = { properties?: Record<string, unknown> };

/** A zod app with fw's own classes in use (Problem failures, the health route, a Page, the document). */
async function zodApp(seen: unknown[]): Promise<void> {
  const app = new App({ log: () => {} })
    .controllers(ZodOrders)
    .failures(Problem)
    .health()
    .openapi({})
    .build();
  seen.push((await app.inject({ method: 'GET', url: '/small' })).status);
  for (const body of ['{"sku":"a","qty":2}', '{"sku":"a","qty":"2"}'])
    seen.push((await app.inject({ method: 'POST', url: '/orders', headers: json, body })).status);
  seen.push((await app.inject({ method: 'GET', url: '/rows' })).body);
  seen.push((await app.inject({ method: 'GET', url: '/healthz' })).status);
  const doc = await app.inject({ method: 'GET', url: '/openapi.json' });
  const schemas = (JSON.parse(doc.body) as { components: { schemas: Record<string, Schema> } })
    .components.schemas;
  // fw's own classes are described from their declarations: Problem's `status` an integer, a
  // Page's items its item class, the health answer's one value.
  seen.push(
    doc.status,
    schemas.Failure?.properties?.status,
    schemas.PageOfRow?.properties?.items,
    schemas.HealthStatus?.properties?.status,
  );
  await app.close();
}

/** The app's own class declares with class-validator, which the app loads (as its imports would). */
async function classValidatorApp(seen: unknown[]): Promise<void> {
  const cv = require('class-validator') as typeof ClassValidator;
  class Order {
    @cv.IsString() @cv.Length(1, 32) sku!: string;
    @cv.IsInt() @cv.Min(1) @cv.Max(100) qty!: number;
    @cv.IsOptional() @cv.IsEmail() email?: string;
  }
  @Controller()
  class Orders {
    @Post('/orders')
    @Returns(Status(201, Order))
    create(@Body() order: Order) {
      return order;
    }
  }
  const app = new App({ log: () => {} }).controllers(Orders).build();
  for (const body of [
    '{"sku":"a","qty":2,"email":"a@example.com"}',
    '{"sku":"a","qty":2,"email":"nope"}',
  ])
    seen.push((await app.inject({ method: 'POST', url: '/orders', headers: json, body })).status);
  await app.close();
}

/**
 * A Page declared while class-transformer is not loaded, then read by `plainToInstance` (which loads
 * it): its items are built as its item class, as `@Type(() => Row)` would have them.
 */
function pageUnspelled(seen: unknown[]): void {
  class Line {
    sku = '';
  }
  const PageOfLine = Page(Line);
  seen.push(loaded());
  const page = unspell(PageOfLine, { items: [{ sku: 'a' }], total: 1, next: null });
  seen.push((page as { items: unknown[] }).items[0] instanceof Line);
}

/** Runs one scenario; resolves to what it saw and the VALIDATION packages loaded after it. */
export async function run(scenario: string): Promise<{ seen: unknown[]; loaded: string[] }> {
  const seen: unknown[] = [];
  if (scenario === 'zod app') await zodApp(seen);
  else if (scenario === 'class-validator app') await classValidatorApp(seen);
  else if (scenario === 'page unspelled') pageUnspelled(seen);
  else if (scenario !== 'required') throw new Error(`no scenario ${scenario}`);
  return { seen, loaded: loaded() };
}
