// Run by spec/http/lazy-loading.spec.ts, compiled with lib into a temp dir and required in a fresh
// node: each scenario uses one feature (or none) and prints which of the optional packages the
// process has loaded. Imports are relative (no path mapping at run time) and none of them names
// an optional package, so whatever of those is loaded, fw loaded.
import 'reflect-metadata';
import { IsInt, IsString, Length, Max, Min, ValidateIf } from 'class-validator';
import type { Transform as TransformDecorator } from 'class-transformer';
import type * as OtelApi from '@opentelemetry/api';
import type * as TraceSdk from '@opentelemetry/sdk-trace-base';
import { App, Body, Controller, Ctx, Form, Get, Post, Returns, Status } from '../../lib/http';
import { FormFile, type UploadedFile } from '../../lib/http/features/uploads';
import { WebSocketRoute } from '../../lib/http/features/ws';
import { MemoryStore, RedisStore, Space } from '../../lib/cache';
import { Client } from '../../lib/fetch';
import { Idempotent } from '../../lib/http';

export const OPTIONAL = [
  'ioredis',
  'undici',
  'ws',
  'class-transformer',
  '@opentelemetry/api',
  'busboy',
] as const;

/** The optional packages with at least one file in require.cache. */
export function loaded(): string[] {
  const files = Object.keys(require.cache);
  return OPTIONAL.filter((name) => files.some((f) => f.includes(`/node_modules/${name}/`)));
}

class NewOrder {
  @IsString() @Length(1, 32) sku!: string;
  @IsInt() @Min(1) @Max(100) qty!: number;
}

// @ValidateIf is one of the declarations the compiled reader cannot follow: this class is read
// by class-transformer + class-validator (the fallback).
class Conditional {
  @IsString() kind!: string;
  @ValidateIf((o: Conditional) => o.kind === 'boxed') @IsInt() boxes?: number;
}

const Kept = Space('lazy', { ttlSeconds: 60, maxBytes: 64 * 1024 });

@Controller()
class Plain {
  @Get('/small')
  @Returns(NewOrder)
  small() {
    return { sku: 'a', qty: 1 };
  }

  @Post('/orders')
  @Returns(Status(201, NewOrder))
  create(@Body() order: NewOrder) {
    return order;
  }

  @Post('/idem')
  @Idempotent(Kept, { by: () => 'lazy' })
  @Returns(Status(201, NewOrder))
  idem(@Body() order: NewOrder) {
    return order;
  }
}

@Controller()
class Fallback {
  @Post('/conditional')
  @Returns(Status(201, Conditional))
  create(@Body() body: Conditional) {
    return body;
  }
}

@Controller()
class Sockets {
  @WebSocketRoute('/ws', { origins: '*' }) ws(c: Ctx) {
    c.upgrade((peer) => peer.send('hi'), null);
  }
}

class Upload {
  @FormFile() file!: UploadedFile;
}

@Controller()
class Uploads {
  @Post('/upload')
  @Returns(Status(201, Object))
  take(@Form() u: Upload) {
    return { size: u.file.size };
  }
}

class Signup {
  @IsString() name!: string;
}

@Controller()
class Forms {
  @Post('/signup')
  @Returns(Status(201, Object))
  signup(@Form() s: Signup) {
    return { name: s.name };
  }
}

const json = { 'content-type': 'application/json' };

/** POSTs a one-file multipart form to /upload: its status and body. */
async function upload(app: App): Promise<[number, string]> {
  const body =
    '--b\r\nContent-Disposition: form-data; name="file"; filename="f"\r\n\r\nabc\r\n--b--\r\n';
  const r = await app.inject({
    method: 'POST',
    url: '/upload',
    headers: { 'content-type': 'multipart/form-data; boundary=b' },
    body,
  });
  return [r.status, r.body];
}

/** Runs one scenario; resolves to what it saw (statuses) and the packages loaded after it. */
export async function run(scenario: string): Promise<{ seen: unknown[]; loaded: string[] }> {
  const seen: unknown[] = [];
  switch (scenario) {
    case 'required':
      break;
    case 'plain app': {
      // A GET, a validated POST (a good and a bad body) and a first + replayed idempotent POST.
      const app = new App({ log: () => {} })
        .controllers(Plain)
        .provide(Kept.open(new MemoryStore({ bytes: 1 << 20 })))
        .build();
      seen.push((await app.inject({ method: 'GET', url: '/small' })).status);
      for (const body of ['{"sku":"a","qty":2}', '{"sku":"a","qty":"2"}'])
        seen.push(
          (await app.inject({ method: 'POST', url: '/orders', headers: json, body })).status,
        );
      const idem = { ...json, 'idempotency-key': 'k1' };
      for (let i = 0; i < 2; i++) {
        const r = await app.inject({
          method: 'POST',
          url: '/idem',
          headers: idem,
          body: '{"sku":"a","qty":2}',
        });
        seen.push(r.status, r.headers['idempotent-replayed'] ?? null);
      }
      await app.close();
      break;
    }
    case 'client built': {
      const client = new Client();
      client.start();
      await client.close();
      break;
    }
    case 'websocket route': {
      const app = new App({ log: () => {} }).controllers(Sockets).build();
      await app.close();
      break;
    }
    case 'fallback body': {
      const app = new App({ log: () => {} }).controllers(Fallback).build();
      for (const body of ['{"kind":"boxed","boxes":2}', '{"kind":"boxed","boxes":"x"}'])
        seen.push(
          (await app.inject({ method: 'POST', url: '/conditional', headers: json, body })).status,
        );
      await app.close();
      break;
    }
    case 'transformer loaded late': {
      // The program loads class-transformer after fw: fw sees its decorators from then on.
      const { Transform } = require('class-transformer') as {
        Transform: typeof TransformDecorator;
      };
      class Trimmed {
        @IsString()
        @Transform(({ value }: { value: unknown }) =>
          typeof value === 'string' ? value.trim() : value,
        )
        name!: string;
      }
      @Controller()
      class Late {
        @Post('/trimmed')
        @Returns(Status(201, Trimmed))
        create(@Body() body: Trimmed) {
          return body;
        }
      }
      const app = new App({ log: () => {} }).controllers(Late).build();
      const r = await app.inject({
        method: 'POST',
        url: '/trimmed',
        headers: json,
        body: '{"name":"  bob  "}',
      });
      seen.push(r.status, r.body);
      await app.close();
      break;
    }
    case 'sdk registered': {
      // The program registers an OpenTelemetry SDK after fw is loaded, before the app is built:
      // fw records the request's span.
      const { trace } = require('@opentelemetry/api') as typeof OtelApi;
      const sdk = require('@opentelemetry/sdk-trace-base') as typeof TraceSdk;
      const exporter = new sdk.InMemorySpanExporter();
      trace.setGlobalTracerProvider(
        new sdk.BasicTracerProvider({ spanProcessors: [new sdk.SimpleSpanProcessor(exporter)] }),
      );
      const app = new App({ log: () => {} })
        .controllers(Plain)
        .provide(Kept.open(new MemoryStore({ bytes: 1 << 20 })))
        .build();
      seen.push((await app.inject({ method: 'GET', url: '/small' })).status);
      for (let i = 0; i < 100 && exporter.getFinishedSpans().length === 0; i++)
        await new Promise((r) => setTimeout(r, 10));
      seen.push(exporter.getFinishedSpans().map((s) => s.name));
      await app.close();
      break;
    }
    case 'upload route built': {
      const app = new App({ log: () => {} }).controllers(Uploads).build();
      await app.close();
      break;
    }
    case 'upload': {
      const app = new App({ log: () => {} }).controllers(Uploads).build();
      seen.push(...(await upload(app)));
      await app.close();
      break;
    }
    case 'busboy missing': {
      // As if busboy were not installed: resolving it fails the way a missing package does.
      const Module = require('node:module') as {
        _resolveFilename: (r: string, ...a: unknown[]) => string;
      };
      const resolve = Module._resolveFilename;
      Module._resolveFilename = (request, ...rest) => {
        if (request === 'busboy')
          throw Object.assign(new Error(`Cannot find module 'busboy'`), {
            code: 'MODULE_NOT_FOUND',
          });
        return resolve(request, ...rest);
      };
      // build() refuses the upload route, naming the command; a form-only app still builds.
      try {
        new App({ log: () => {} }).controllers(Uploads).build();
        seen.push('built');
      } catch (e) {
        seen.push((e as Error).name, (e as Error).message);
      }
      const forms = new App({ log: () => {} }).controllers(Forms).build();
      const r = await forms.inject({
        method: 'POST',
        url: '/signup',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'name=ann',
      });
      seen.push(r.status, r.body);
      await forms.close();
      break;
    }
    case 'redis store': {
      // Nothing listens on port 1: the store is built and closed, never used.
      const store = new RedisStore({ url: 'redis://127.0.0.1:1' });
      await store.close();
      break;
    }
    default:
      throw new Error(`no scenario ${scenario}`);
  }
  return { seen, loaded: loaded() };
}
