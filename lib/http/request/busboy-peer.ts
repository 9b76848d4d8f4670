import type BusboyType from 'busboy';
import { HttpError } from '../core/errors';

type Busboy = typeof BusboyType;
let busboy: Busboy | null = null;

const INSTALL =
  'a multipart @Form needs busboy, an optional peer dependency of fw-http: npm install busboy';

/**
 * busboy, loaded on the first multipart form: it is an optional peer dependency, installed by
 * apps that take uploads. `build()` has already refused an upload route without it
 * (`busboyMissing`); this is the last word for a package that resolved then but fails to load.
 */
export function loadBusboy(): Busboy {
  if (busboy !== null) return busboy;
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on the first upload only
    busboy = require('busboy') as Busboy;
  } catch (e) {
    if ((e as { code?: unknown }).code !== 'MODULE_NOT_FOUND') throw e;
    throw new HttpError('PeerMissing', INSTALL);
  }
  return busboy;
}

/**
 * Why an upload route cannot be served here, or null: busboy is looked up without being loaded,
 * so an app whose uploads never arrive still does not load it, and one without it installed is
 * refused at `build()` rather than answering 500 to its first upload.
 */
export function busboyMissing(): string | null {
  if (busboy !== null) return null;
  try {
    require.resolve('busboy');
    return null;
  } catch (e) {
    if ((e as { code?: unknown }).code !== 'MODULE_NOT_FOUND') throw e;
    return INSTALL;
  }
}
