import { IsArray, IsInt, IsOptional, IsString, Min, ValidateNested } from 'class-validator';

/** One page of a list: its items, how many there are in all, and the cursor of the next page (null on the last). */
export interface PageOf<T> {
  items: T[];
  total: number;
  next?: string | null;
}

type Decorate = (target: object, key: string) => void;
const pages = new WeakMap<Function, new () => PageOf<unknown>>();

/**
 * A generic envelope without a hand-written class: `@Returns(Page(Order))` answers
 * `{ items: Order[], total, next }`, documented as the component `PageOfOrder` and typed
 * `PageOf<Order>` for the handler. One class per item class.
 * @example @Get() @Returns(Page(Order)) list(): PageOf<Order> { return { items, total, next: null }; }
 */
export function Page<T>(item: abstract new (...args: never[]) => T): new () => PageOf<T> {
  const known = pages.get(item);
  if (known !== undefined) return known as new () => PageOf<T>;
  class PageOfItem {
    items!: T[];
    total!: number;
    next?: string | null;
  }
  Object.defineProperty(PageOfItem, 'name', { value: `PageOf${item.name}` });
  // class-transformer is a dependency but loaded only where used (see lib/json/transformer.ts).
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- deferred until a Page is declared
  const { Type } = require('class-transformer') as {
    Type: (f: () => Function) => Decorate;
  };
  const on = (key: string, ...decorators: Decorate[]) => {
    for (const d of decorators) d(PageOfItem.prototype, key);
  };
  on(
    'items',
    IsArray() as Decorate,
    ValidateNested({ each: true }) as Decorate,
    Type(() => item),
  );
  on('total', IsInt() as Decorate, Min(0) as Decorate);
  on('next', IsOptional() as Decorate, IsString() as Decorate);
  pages.set(item, PageOfItem);
  return PageOfItem;
}
