import { declareOwn } from '../../json/validator';
import {
  IS_ARRAY,
  IS_INT,
  IS_OPTIONAL,
  IS_STRING,
  MIN,
  ValidationTypes,
} from '../../json/validator-names';

/** One page of a list: its items, how many there are in all, and the cursor of the next page (null on the last). */
export interface PageOf<T> {
  items: T[];
  total: number;
  next?: string | null;
}

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
  // As `@ValidateNested({ each: true }) @IsArray() @Type(() => item) items`, `@Min(0) @IsInt()
  // total` and `@IsString() @IsOptional() next` would declare them, with neither class-validator
  // nor class-transformer loaded for it.
  declareOwn(PageOfItem, {
    items: {
      checks: [{ type: ValidationTypes.NESTED_VALIDATION, each: true }, { name: IS_ARRAY }],
      type: item,
    },
    total: { checks: [{ name: MIN, constraints: [0] }, { name: IS_INT }] },
    next: {
      checks: [
        { name: IS_STRING },
        { type: ValidationTypes.CONDITIONAL_VALIDATION, name: IS_OPTIONAL },
      ],
    },
  });
  pages.set(item, PageOfItem);
  return PageOfItem;
}
