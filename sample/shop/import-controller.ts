import { readFile } from 'node:fs/promises';
import { IsInt, IsOptional, IsString, MaxLength } from 'class-validator';
import { Controller, Ctx, Failure, Form, Idempotent, Post, Returns, Status, fail } from 'fw-http';
import { Tx } from 'fw-http/atomic';
import { FormFile, type UploadedFile } from 'fw-http/uploads';
import { Account } from './account';
import { OrderBook, type OrderLine } from './order-book';
import { Imports } from './spaces';

/** Order lines one import takes at most: a file with more is 413 naming the limit, and nothing is imported. */
export const MAX_IMPORT_LINES = 1000;

/** What `POST /orders/import` reads: a note and a CSV of `sku,qty` lines, at most 1 MiB. */
export class OrdersImport {
  @IsOptional() @IsString() @MaxLength(200) note?: string;
  @FormFile({ maxBytes: 1024 * 1024, types: ['text/csv'] }) csv!: UploadedFile;
}

/** What the import answers: how many orders it placed, and the file it read them from. */
export class Imported {
  @IsInt() imported!: number;
  @IsInt() bytes!: number;
  @IsString() sha256!: string;
}

const LINE = /^([^,]{1,32}),(\d{1,3})$/;
const HEADER = 'sku,qty';

/** Kept answers are per account: one account's key never replays another's import. */
const byAccount = async (c: Ctx) => (await c.resolveAsync(Account)).id;

/**
 * The orders of a CSV, every line checked before any is placed. Blank lines and a first line
 * `sku,qty` are not order lines; a line may end in CRLF. More than `MAX_IMPORT_LINES` order lines
 * is a 413 whatever they hold; then a bad line is a 400 naming it (lines counted from 1).
 */
export function orderLines(text: string): OrderLine[] {
  const lines = text.replace(/^\uFEFF/, '').split('\n');
  let header = lines.findIndex((l) => l.trim() !== '');
  if (header >= 0 && lines[header]!.trim() !== HEADER) header = -1;
  let count = 0;
  for (let i = 0; i < lines.length; i++)
    if (i !== header && lines[i]!.trim() !== '' && ++count > MAX_IMPORT_LINES)
      throw fail.tooLarge(
        'csv: more than %d order lines (an import takes at most %d)',
        MAX_IMPORT_LINES,
        MAX_IMPORT_LINES,
      );
  const out: OrderLine[] = [];
  for (let i = 0; i < lines.length; i++) {
    const row = lines[i]!.trim();
    if (i === header || row === '') continue;
    const m = LINE.exec(row);
    const qty = m === null ? 0 : Number(m[2]);
    if (m === null || qty < 1 || qty > 100)
      throw fail.badRequest('csv line %d: expected sku,qty with qty 1..100', i + 1);
    out.push({ sku: m[1]!, qty });
  }
  return out;
}

/**
 * The import route. With `atomic` (the book in Postgres, the space on its PgStore) the orders and
 * the kept answer commit in one transaction: a database failure imports nothing (503) and a retry
 * of the key imports once. In memory the orders are placed all at once after every line was
 * checked, and the key's answer is kept in the `imports` space.
 */
export function importController(atomic: boolean) {
  @Controller('/orders')
  class ImportController {
    constructor(readonly book: OrderBook) {}

    /**
     * Places one order per `sku,qty` line, all or none. The file is read from its temp file, which
     * fw removes when the request ends. The account comes first: a caller without a token is
     * refused before the upload is read.
     */
    @Post('/import')
    @Idempotent(Imports, { by: byAccount, atomic })
    @Returns(Status(201, Imported))
    async import(account: Account, @Form() form: OrdersImport, c: Ctx): Promise<Imported> {
      // At most 1 MiB (the field's maxBytes): read at once. A line iterator over the file awaited a
      // promise per line, seconds for a megabyte of blank lines.
      const lines = orderLines(await readFile(form.csv.path, 'utf8'));
      const imported = await this.book
        .placeAll(account.id, lines, atomic ? c.resolve(Tx) : null)
        .catch((e: unknown) => {
          // The database failed under the import: nothing was imported, and a retry may succeed.
          if (e instanceof Failure && e.status === 503) c.setHeader('retry-after', '1');
          throw e;
        });
      return Object.assign(new Imported(), {
        imported,
        bytes: form.csv.size,
        sha256: form.csv.sha256,
      });
    }
  }
  return ImportController;
}
