import { constants, gzipSync } from 'node:zlib';
import type { Ctx } from '../request/ctx';
import type { Capability } from '../route/extensions';
import { addHeader, type HeaderBag } from '../core/header-rules';

export interface CompressOptions {
  /** Smallest body gzipped, in bytes. Default 1024. */
  readonly minBytes?: number;
  /** `'default'` (6), `'fastest'` (1) or `'best'` (9). */
  readonly level?: 'default' | 'fastest' | 'best';
}

export const LEVELS = { default: 6, fastest: 1, best: 9 } as const;

/** Text answers only: text/*, JSON, JavaScript, XML, WASM and any +json or +xml type. Event streams never. */
const COMPRESSIBLE =
  /^(?:text\/(?!event-stream)[^;]+|application\/(?:json|javascript|ecmascript|xml|wasm|[^;]+\+(?:json|xml))|image\/svg\+xml)\s*(?:;|$)/i;

export function isCompressible(type: string): boolean {
  return COMPRESSIBLE.test(type);
}

/**
 * Whether an `Accept-Encoding` takes gzip (RFC 9110 §12.5.3): a `gzip` (or `x-gzip`) entry with a
 * q-value above 0, or `*` above 0 when gzip is not named.
 */
export function acceptsGzip(header: string | undefined): boolean {
  if (header === undefined || header === '') return false;
  let star = false;
  for (const part of header.split(',')) {
    const [name, ...params] = part.trim().toLowerCase().split(';');
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const weight = q === undefined ? 1 : Number(q.slice(2));
    if (name === 'gzip' || name === 'x-gzip') return weight > 0;
    if (name === '*') star = weight > 0;
  }
  return star;
}

/** Compression as a capability: `app.compress(options)` is `app.use(compression(options))`. */
export function compression(options: CompressOptions = {}): Capability {
  return { name: 'compress', register: (host) => host.compressAnswers(compressor(options)) };
}

/**
 * The compression step of an app's buffered answers. Streams, event streams and files never pass
 * here: they are written by their own code.
 */
export function compressor(
  options: CompressOptions,
): (c: Ctx, bag: HeaderBag, type: string, body: Uint8Array | string) => Uint8Array | string {
  const min = options.minBytes ?? 1024;
  const level = LEVELS[options.level ?? 'default'] ?? constants.Z_DEFAULT_COMPRESSION;
  return (c, bag, type, body) => {
    if (bag['content-encoding'] !== undefined) return body;
    // The size first: it is cheaper than the type's pattern, and most answers are small. A string
    // of n code units is at most 3n bytes of UTF-8, so a short one needs no counting.
    const size =
      typeof body !== 'string'
        ? body.length
        : body.length * 3 < min
          ? body.length
          : Buffer.byteLength(body);
    if (size < min || !isCompressible(type)) return body;
    // Every answer that would be gzipped for a gzip client varies by Accept-Encoding, plain ones too.
    addHeader(bag, 'vary', 'Accept-Encoding');
    if (!acceptsGzip(c.header('accept-encoding') ?? undefined)) return body;
    bag['content-encoding'] = 'gzip';
    return gzipSync(body, { level });
  };
}
