// Static content types by file extension. Unknown extensions are application/octet-stream.
import { OCTET_STREAM } from '../../core/media-types';

const UTF8 = '; charset=utf-8';

const TYPES: Readonly<Record<string, string>> = {
  html: 'text/html' + UTF8,
  htm: 'text/html' + UTF8,
  css: 'text/css' + UTF8,
  js: 'text/javascript' + UTF8,
  mjs: 'text/javascript' + UTF8,
  cjs: 'text/javascript' + UTF8,
  json: 'application/json' + UTF8,
  map: 'application/json' + UTF8,
  webmanifest: 'application/manifest+json' + UTF8,
  txt: 'text/plain' + UTF8,
  md: 'text/markdown' + UTF8,
  csv: 'text/csv' + UTF8,
  xml: 'application/xml' + UTF8,
  svg: 'image/svg+xml' + UTF8,
  wasm: 'application/wasm',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  avif: 'image/avif',
  ico: 'image/x-icon',
  woff: 'font/woff',
  woff2: 'font/woff2',
  ttf: 'font/ttf',
  otf: 'font/otf',
  mp3: 'audio/mpeg',
  ogg: 'audio/ogg',
  wav: 'audio/wav',
  mp4: 'video/mp4',
  webm: 'video/webm',
  zip: 'application/zip',
  gz: 'application/gzip',
  br: 'application/x-brotli',
  '7z': 'application/x-7z-compressed',
  pdf: 'application/pdf',
};

/** Already compressed: gzipping them again gains nothing (images other than SVG, fonts, audio, video, archives, PDF). */
const COMPRESSED = new Set([
  'png',
  'jpg',
  'jpeg',
  'gif',
  'webp',
  'avif',
  'ico',
  'woff',
  'woff2',
  'ttf',
  'otf',
  'mp3',
  'ogg',
  'wav',
  'mp4',
  'webm',
  'zip',
  'gz',
  'br',
  '7z',
  'pdf',
]);

function extension(path: string): string {
  const name = path.slice(path.lastIndexOf('/') + 1);
  const dot = name.lastIndexOf('.');
  return dot <= 0 ? '' : name.slice(dot + 1).toLowerCase();
}

/** The `Content-Type` of a static file, by its extension. */
export function contentTypeOf(path: string): string {
  return TYPES[extension(path)] ?? OCTET_STREAM;
}

/** Whether a file's type is already compressed, so gzipping it would not pay. */
export function isPrecompressed(path: string): boolean {
  return COMPRESSED.has(extension(path));
}
