import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { IsOptional, IsString, Length } from 'class-validator';
import { App, Bound, Body, Controller, Ctx, Form, Post, Returns, Status } from 'fw-http';
import { BodyLimit, FormFile, UploadedFile } from 'fw-http/uploads';
import { emptied, multipart, post } from '../../support/multipart';

class Avatar {
  @IsString() @Length(1, 80) caption!: string;
  @FormFile({ maxBytes: 1024, types: ['image/png', 'text/plain'] }) image!: UploadedFile;
}

class Docs {
  @IsOptional() @IsString() note?: string;
  @FormFile({ count: 5, required: false }) docs!: UploadedFile[];
}

class Note {
  @IsString() @Length(1, 10) text!: string;
}

const seen = (f: UploadedFile) => ({
  field: f.field,
  name: f.name,
  type: f.type,
  declaredType: f.declaredType,
  sniffed: f.sniffed,
  size: f.size,
  sha256: f.sha256,
  mode: statSync(f.path).mode & 0o777,
  content: readFileSync(f.path, 'latin1'),
  isFile: f instanceof UploadedFile,
});

@Controller()
class Uploads {
  @Post('/avatars')
  @Returns(Status(201, Object))
  save(@Form() a: Avatar) {
    return { caption: a.caption, isAvatar: a instanceof Avatar, image: seen(a.image) };
  }

  @Post('/docs')
  @Returns(Status(201, Object))
  docs(
    @Form({
      maxFiles: 4,
      maxFields: 2,
      maxFieldBytes: 10,
      maxParts: 5,
      maxPartHeaderBytes: 200,
      maxTotalBytes: 8192,
    })
    d: Docs,
  ) {
    return { note: d.note ?? null, docs: d.docs.map(seen) };
  }

  @Post('/bound')
  @Returns(Status(201, Object))
  bound(@Form(Avatar) b: Bound<Avatar>) {
    return { ok: b.ok, errors: b.errors };
  }

  @Post('/throws')
  @Returns(Status(201, Object))
  throws(@Form() a: Avatar): object {
    throw new Error(`handler failed with ${a.image.size} bytes`);
  }

  @Post('/waits')
  @Returns(Status(201, Object))
  async waits(@Form() a: Avatar, c: Ctx) {
    await c.sleep(60_000);
    return { size: a.image.size };
  }

  @Post('/big')
  @BodyLimit(2048)
  @Returns(Object)
  big(@Body() n: Note) {
    return n;
  }

  @Post('/small')
  @Returns(Object)
  small(@Body() n: Note) {
    return n;
  }

  @Post('/raw')
  @BodyLimit(100)
  @Returns(Object)
  async raw(c: Ctx) {
    return { bytes: (await c.body()).length };
  }
}

const dir = mkdtempSync(join(tmpdir(), 'fw-uploads-spec-'));
let app: App;
let port = 0;
beforeAll(async () => {
  app = new App({ log: () => {}, uploads: { tmpDir: dir }, maxBodyBytes: 1024 }).controllers(
    Uploads,
  );
  port = Number(new URL((await app.listen({ port: 0 })).url).port);
});
afterAll(async () => {
  await app.close();
  rmSync(dir, { recursive: true, force: true });
});
afterEach(async () => {
  expect(await emptied(dir)).toEqual([]);
});

const png = Buffer.concat([
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
  Buffer.alloc(100, 7),
]);
const send = (path: string, parts: Parameters<typeof multipart>[0], extra = {}) => {
  const m = multipart(parts);
  return post(port, path, m.body, { 'content-type': m.type, ...extra });
};
const image = (data: Buffer | string, type = 'image/png') => ({
  name: 'image',
  filename: 'C:\\photos\\me.png',
  type,
  data,
});

describe('uploads: @Form with @FormFile', () => {
  it('a multipart form gives fields validated and each file on disk (0600) with size, sha256 and sniffed type', async () => {
    const res = await send('/avatars', [{ name: 'caption', value: 'me' }, image(png)]);
    expect(res.status).toBe(201);
    expect(res.json()).toEqual({
      caption: 'me',
      isAvatar: true,
      image: {
        field: 'image',
        name: 'me.png',
        type: 'image/png',
        declaredType: 'image/png',
        sniffed: 'image/png',
        size: png.length,
        sha256: createHash('sha256').update(png).digest('hex'),
        mode: 0o600,
        content: png.toString('latin1'),
        isFile: true,
      },
    });
  });

  it('a text file declared as text/plain is not sniffed as anything', async () => {
    const res = await send('/avatars', [
      { name: 'caption', value: 'x' },
      image('a,b\n', 'text/plain'),
    ]);
    expect(res.json<{ image: { sniffed: null; type: string } }>().image).toMatchObject({
      sniffed: null,
      type: 'text/plain',
    });
  });

  it('a field failing class-validator is 400 naming it; files are removed', async () => {
    const res = await send('/avatars', [{ name: 'caption', value: '' }, image(png)]);
    expect(res.status).toBe(400);
    expect(res.json<{ error: string }>().error).toMatch(/^form\.caption: /);
  });

  it('a missing required file is 400 naming the field', async () => {
    const res = await send('/avatars', [{ name: 'caption', value: 'me' }]);
    expect(res.status).toBe(400);
    expect(res.json()).toEqual({ error: 'form.image: a file is required', status: 400 });
  });

  it('a disallowed type is 415 naming the field', async () => {
    const res = await send('/avatars', [{ name: 'caption', value: 'me' }, image(png, 'image/gif')]);
    expect(res.status).toBe(415);
    expect(res.json()).toEqual({
      error: 'form.image: type image/gif is not accepted (image/png, text/plain)',
      status: 415,
    });
  });

  it('a UTF-8 file name arrives as the browser sent it (café.png), not read as latin1', async () => {
    const res = await send('/avatars', [
      { name: 'caption', value: 'çà' },
      { ...image(png), filename: 'café ☕.png' },
    ]);
    expect(res.status).toBe(201);
    expect(res.json<{ caption: string; image: { name: string } }>()).toMatchObject({
      caption: 'çà',
      image: { name: 'café ☕.png' },
    });
  });

  it('a part that declares no Content-Type is text/plain (RFC 7578 §4.4) with declaredType null; a declared one keeps it', async () => {
    const doc = (i: number, type?: string) => ({
      name: 'docs',
      filename: `d${i}.txt`,
      data: `d${i}`,
      ...(type === undefined ? {} : { type }),
    });
    const res = await send('/docs', [
      doc(1),
      doc(2, 'text/plain'),
      doc(3),
      doc(4, 'Text/CSV; charset=utf-8'),
    ]);
    expect(res.status).toBe(201);
    expect(
      res
        .json<{ docs: { type: string; declaredType: string | null }[] }>()
        .docs.map((d) => [d.type, d.declaredType]),
    ).toEqual([
      ['text/plain', null],
      ['text/plain', 'text/plain'],
      ['text/plain', null],
      ['text/csv', 'text/csv'],
    ]);
  });

  it('types refuses a part that declares no Content-Type (415), even when it lists text/plain', async () => {
    const untyped = await send('/avatars', [
      { name: 'caption', value: 'me' },
      { name: 'image', filename: 'a.txt', data: 'a,b\n' },
    ]);
    expect(untyped.status).toBe(415);
    expect(untyped.json()).toEqual({
      error: 'form.image: the part declares no Content-Type (accepted: image/png, text/plain)',
      status: 415,
    });
    const declared = await send('/avatars', [
      { name: 'caption', value: 'me' },
      image('a,b\n', 'text/plain'),
    ]);
    expect(declared.status).toBe(201);
    expect(declared.json<{ image: { declaredType: string } }>().image.declaredType).toBe(
      'text/plain',
    );
  });

  it('per-file maxBytes: exactly the limit is read, one byte more is 413 naming it', async () => {
    const at = await send('/avatars', [
      { name: 'caption', value: 'me' },
      image(Buffer.alloc(1024, 1)),
    ]);
    expect(at.status).toBe(201);
    const past = await send('/avatars', [
      { name: 'caption', value: 'me' },
      image(Buffer.alloc(1025, 1)),
    ]);
    expect(past.status).toBe(413);
    expect(past.json()).toEqual({
      error: 'form.image: file larger than 1024 bytes (maxBytes)',
      status: 413,
    });
  });

  it('a file where a field is declared, and a file field nobody declared, are 400 naming them', async () => {
    const asField = await send('/avatars', [
      { name: 'caption', value: 'me' },
      { name: 'image', value: 'x' },
    ]);
    expect(asField.json()).toEqual({ error: 'form.image: must be a file', status: 400 });
    const stranger = await send('/avatars', [
      { name: 'caption', value: 'me' },
      { name: 'other', filename: 'o.txt', type: 'text/plain', data: 'o' },
    ]);
    expect(stranger.json()).toEqual({
      error: 'form.other: not a file field of this form',
      status: 400,
    });
  });

  it('count: a list takes its files in order; a single file field takes one, a second is 413', async () => {
    const doc = (i: number) => ({
      name: 'docs',
      filename: `d${i}.txt`,
      type: 'text/plain',
      data: `d${i}`,
    });
    const three = await send('/docs', [doc(1), doc(2), doc(3)]);
    expect(three.status).toBe(201);
    expect(three.json<{ docs: { name: string }[] }>().docs.map((d) => d.name)).toEqual([
      'd1.txt',
      'd2.txt',
      'd3.txt',
    ]);
    const two = await send('/avatars', [{ name: 'caption', value: 'me' }, image(png), image(png)]);
    expect(two.status).toBe(413);
    expect(two.json()).toEqual({ error: 'form.image: more than 1 files (count)', status: 413 });
    const none = await send('/docs', []);
    expect(none.json()).toEqual({ note: null, docs: [] });
  });

  it('maxFields and maxFieldBytes: at the limit read, past it 413 naming the limit', async () => {
    expect((await send('/docs', [{ name: 'note', value: '0123456789' }])).status).toBe(201);
    const long = await send('/docs', [{ name: 'note', value: '0123456789x' }]);
    expect(long.status).toBe(413);
    expect(long.json()).toEqual({
      error: 'form.note: value larger than 10 bytes (maxFieldBytes)',
      status: 413,
    });
    const two = [
      { name: 'a', value: '1' },
      { name: 'b', value: '2' },
    ];
    expect((await send('/docs', two)).status).toBe(201);
    const three = await send('/docs', [...two, { name: 'c', value: '3' }]);
    expect(three.status).toBe(413);
    expect(three.json()).toEqual({ error: 'form: more than 2 fields (maxFields)', status: 413 });
  });

  it('maxParts and maxFiles: at the limit read, past it 413 naming the limit', async () => {
    const doc = (i: number) => ({
      name: 'docs',
      filename: `d${i}.txt`,
      type: 'text/plain',
      data: 'd',
    });
    const five = [{ name: 'a', value: '1' }, { name: 'b', value: '2' }, doc(1), doc(2), doc(3)];
    expect((await send('/docs', five)).status).toBe(201);
    const six = await send('/docs', [...five, { name: 'x', filename: 'x', data: 'x' }]);
    expect(six.status).toBe(413);
    expect(six.json()).toEqual({ error: 'form: more than 5 parts (maxParts)', status: 413 });
    expect((await send('/docs', [doc(1), doc(2), doc(3), doc(4)])).status).toBe(201);
    const files = await send('/docs', [doc(1), doc(2), doc(3), doc(4), doc(5)]);
    expect(files.status).toBe(413);
    expect(files.json()).toEqual({ error: 'form: more than 4 files (maxFiles)', status: 413 });
  });

  it('maxPartHeaderBytes: a header block of exactly the bound is read, one byte more is 413', async () => {
    // The block counted is every byte after the delimiter's CRLF up to and including the blank line.
    const base = 'Content-Disposition: form-data; name="note"\r\n'.length + 2;
    const pad = (n: number) => `X-Pad: ${'p'.repeat(n - 'X-Pad: \r\n'.length)}\r\n`;
    const at = await send('/docs', [{ name: 'note', value: 'n', extra: pad(200 - base) }]);
    expect(at.status).toBe(201);
    const past = await send('/docs', [{ name: 'note', value: 'n', extra: pad(201 - base) }]);
    expect(past.status).toBe(413);
    expect(past.json()).toEqual({
      error: "form: a part's headers are larger than 200 bytes (maxPartHeaderBytes)",
      status: 413,
    });
  });

  it('maxTotalBytes: a declared length past it is 413 before anything is read; so is a streamed one', async () => {
    const big = Buffer.alloc(9000, 1);
    const declared = await send('/docs', [{ name: 'docs', filename: 'b', data: big }]);
    expect(declared.status).toBe(413);
    expect(declared.json()).toEqual({
      error: 'form: body larger than 8192 bytes (maxTotalBytes)',
      status: 413,
    });
    const m = multipart([{ name: 'docs', filename: 'b', data: big }]);
    const chunked = await post(port, '/docs', m.body, {
      'content-type': m.type,
      'transfer-encoding': 'chunked',
    });
    expect(chunked.status).toBe(413);
    expect(chunked.json()).toEqual(declared.json());
  });

  it('maxPartHeaderBytes at its default (16 KiB, busboy ceiling): a larger header block is 400 naming it', async () => {
    const pad = `X-Pad: ${'p'.repeat(17 * 1024)}\r\n`;
    const res = await send('/avatars', [{ name: 'caption', value: 'me', extra: pad }, image(png)]);
    expect(res.status).toBe(400);
    expect(res.json<{ error: string }>().error).toBe(
      "form: malformed multipart body (a part's headers are malformed or larger than 16384 bytes: maxPartHeaderBytes)",
    );
  });

  it('a malformed multipart body is 400', async () => {
    const res = await post(port, '/avatars', Buffer.from('--b\r\nnonsense'), {
      'content-type': 'multipart/form-data; boundary=b',
    });
    expect(res.status).toBe(400);
    expect(res.json<{ error: string }>().error).toMatch(/^form: malformed multipart body/);
  });

  it('application/x-www-form-urlencoded goes through the same @Form(): its required file is missing', async () => {
    const res = await post(port, '/avatars', Buffer.from('caption=me'), {
      'content-type': 'application/x-www-form-urlencoded',
    });
    expect(res.json()).toEqual({ error: 'form.image: a file is required', status: 400 });
    const ok = await post(port, '/docs', Buffer.from('note=hi'), {
      'content-type': 'application/x-www-form-urlencoded',
    });
    expect(ok.json()).toEqual({ note: 'hi', docs: [] });
    const json = await post(port, '/docs', Buffer.from('{}'), {
      'content-type': 'application/json',
    });
    expect(json.json()).toEqual({
      error: 'form: must be sent as multipart/form-data or application/x-www-form-urlencoded',
      status: 400,
    });
  });

  it('a Bound upload form gets the missing file among its errors', async () => {
    const res = await send('/bound', [{ name: 'caption', value: '' }]);
    expect(res.json<{ errors: string[] }>().errors).toEqual([
      expect.stringMatching(/^form\.caption: /),
      'form.image: a file is required',
    ]);
  });

  it('temp files are removed when the handler throws', async () => {
    const res = await send('/throws', [{ name: 'caption', value: 'me' }, image(png)]);
    expect(res.status).toBe(500);
  });
});

describe('body limits per route and per app', () => {
  it('App({ maxBodyBytes }) bounds @Body on routes without @BodyLimit; @BodyLimit raises it per route', async () => {
    const at = await post(port, '/small', Buffer.from(`{"text":"ok"}${' '.repeat(1024 - 13)}`), {
      'content-type': 'application/json',
    });
    expect(at.status).toBe(200);
    const over = await post(port, '/small', Buffer.alloc(1025, 0x20), {
      'content-type': 'application/json',
    });
    expect(over.status).toBe(413);
    expect(over.json()).toEqual({ error: 'request body is larger than 1024 bytes', status: 413 });
    const bigOk = await post(port, '/big', Buffer.from(`{"text":"ok"}${' '.repeat(2048 - 13)}`), {
      'content-type': 'application/json',
    });
    expect(bigOk.status).toBe(200);
    const bigOver = await post(port, '/big', Buffer.from(`{"text":"ok"}${' '.repeat(2049 - 13)}`), {
      'content-type': 'application/json',
    });
    expect(bigOver.status).toBe(413);
    expect(bigOver.json()).toEqual({
      error: 'request body is larger than 2048 bytes',
      status: 413,
    });
  });

  it('@BodyLimit bounds c.body() too: exactly the limit read, one byte more 413', async () => {
    const at = await post(port, '/raw', Buffer.alloc(100, 1), {});
    expect(at.json()).toEqual({ bytes: 100 });
    const past = await post(port, '/raw', Buffer.alloc(101, 1), {});
    expect(past.status).toBe(413);
  });
});
