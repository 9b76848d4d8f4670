import { Exclude, Expose } from 'class-transformer';
import { IsInt, IsOptional, IsString } from 'class-validator';
import { App, Body, Controller, Get, Post, Returns } from 'fw-http';

// The document: the fields an answer of a class carries and the properties its
// component lists follow one rule (writtenFields), so what the writer writes is exactly what the
// document lists, for a class mixing decorated and undecorated fields.

class Mixed {
  @IsString() id!: string;
  /** No decorator, no initializer: under tsc's ES2022 class fields `new Mixed()` has it. */
  note!: string;
  /** No decorator, an initializer. */
  count = 0;
  @Expose() shown!: string;
  @IsInt() @Exclude({ toPlainOnly: true }) secret!: number;
  @IsOptional() @IsString() nick?: string;
  constructor(readonly made: string = 'x') {}
}

@Controller('/w')
class WrittenController {
  @Get('/mixed')
  @Returns(Mixed)
  mixed(): Mixed {
    return Object.assign(new Mixed('m'), {
      id: 'a',
      note: 'n',
      count: 2,
      shown: 's',
      secret: 3,
      nick: 'k',
      passwordHash: 'h',
    });
  }

  @Post('/mixed')
  @Returns(Object)
  read(@Body() m: Mixed): object {
    return { ...m };
  }
}

const app = new App({ log: () => {} }).controllers(WrittenController);
const component = () =>
  (
    app.document() as unknown as {
      components: { schemas: Record<string, Record<string, unknown>> };
    }
  ).components.schemas.Mixed!;

describe('the writer and the component follow one rule', () => {
  it('a field the writer writes is exactly a field the component lists (writeOnly aside)', async () => {
    const written = Object.keys((await app.inject({ url: '/w/mixed' })).json<object>()).sort();
    const properties = component().properties as Record<string, { writeOnly?: boolean }>;
    const listed = Object.keys(properties)
      .filter((k) => properties[k]!.writeOnly !== true)
      .sort();
    expect(written).toEqual(listed);
    expect(written).toEqual(['count', 'id', 'made', 'nick', 'note', 'shown']);
  });

  it('undecorated fields are readOnly any JSON; an @Exclude(toPlainOnly) one is writeOnly', async () => {
    const c = component();
    expect(c.properties).toMatchObject({
      id: { type: 'string' },
      note: { readOnly: true },
      count: { readOnly: true },
      shown: { readOnly: true },
      made: { readOnly: true },
      secret: { type: 'integer', writeOnly: true },
      nick: { type: ['string', 'null'] },
    });
    expect(c.required).toEqual(['id', 'secret']);
    // readOnly is true to the reader: no input reads an undecorated field.
    const r = await app.inject({
      method: 'POST',
      url: '/w/mixed',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ id: 'a', note: 'sent', count: 5, shown: 'sh', secret: 4, made: 'y' }),
    });
    const read = r.json<Record<string, unknown>>();
    expect([read.id, read.secret]).toEqual(['a', 4]);
    expect(read.note).not.toBe('sent');
    expect(read.count).not.toBe(5);
    expect(read.shown).not.toBe('sh');
  });
});
