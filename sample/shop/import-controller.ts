import { readFile } from 'node:fs/promises';
import { IsInt, IsOptional, IsString, MaxLength } from 'class-validator';
import {
  Controller,
  FormFile,
  Form,
  Post,
  Returns,
  Status,
  fail,
  type UploadedFile,
} from 'fw-http';
import { Account } from './account';
import { OrderBook } from './order-book';

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

@Controller('/orders')
export class ImportController {
  constructor(readonly book: OrderBook) {}

  /**
   * Places one order per `sku,qty` line (a `sku,qty` header line and blank lines are skipped).
   * Every line is checked before any order is placed: a bad line is a 400 naming it, and nothing
   * is imported. The file is read from its temp file, which fw removes when the request ends. The
   * account comes first: a caller without a token is refused before the upload is read.
   */
  @Post('/import')
  @Returns(Status(201, Imported))
  async import(account: Account, @Form() form: OrdersImport): Promise<Imported> {
    const rows: { sku: string; qty: number }[] = [];
    let n = 0;
    // At most 1 MiB (the field's maxBytes): read at once. A line iterator over the file awaited a
    // promise per line, seconds for a megabyte of blank lines.
    const text = await readFile(form.csv.path, 'utf8');
    for (const line of text.split('\n')) {
      n++;
      const row = line.trim();
      if (row === '' || (n === 1 && row === 'sku,qty')) continue;
      const m = LINE.exec(row);
      const qty = m === null ? 0 : Number(m[2]);
      if (m === null || qty < 1 || qty > 100)
        throw fail.badRequest('csv line %d: expected sku,qty with qty 1..100', n);
      rows.push({ sku: m[1]!, qty });
    }
    for (const r of rows) await this.book.place(account.id, r.sku, r.qty, null);
    return Object.assign(new Imported(), {
      imported: rows.length,
      bytes: form.csv.size,
      sha256: form.csv.sha256,
    });
  }
}
