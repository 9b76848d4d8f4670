// Type-level checks of static trees: checked by `tsc --noEmit` in `npm test`, never run.
import { type App } from 'fw-http';
import { type EmbeddedOptions, type StaticOptions } from 'fw-http/files';

declare const app: App;
const entries = [{ path: 'index.html', bytes: '<h1>hi</h1>' }];

// STATIC-62 embeddedWith has no maxFileBytes, maxTotalBytes, dotfiles or reload option
// @ts-expect-error no maxFileBytes on an embedded tree
app.embeddedWith('/', entries, { maxFileBytes: 1 });
// @ts-expect-error no maxTotalBytes on an embedded tree
app.embeddedWith('/', entries, { maxTotalBytes: 1 });
// @ts-expect-error no dotfiles on an embedded tree
app.embeddedWith('/', entries, { dotfiles: true });
// @ts-expect-error no reload on an embedded tree
app.embeddedWith('/', entries, { reload: true });
// STATIC-61 the shared options are accepted
app.embeddedWith('/', entries, {
  index: '',
  cacheControl: 'no-cache',
  spaFallback: 'index.html',
  spaFallbackFor: 'anyPath',
  compress: false,
  compressMinBytes: 10,
});
app.embeddedWith('/', [{ path: 'a.bin', bytes: new Uint8Array(3) }], {});

// STATIC-09 spaFallbackFor is one of two values
// @ts-expect-error not a fallback mode
app.staticWith('/', 'public', { spaFallbackFor: 'always' });
app.staticWith('/', 'public', {
  maxFileBytes: 1,
  maxTotalBytes: 2,
  dotfiles: true,
  reload: true,
  spaFallbackFor: 'navigations',
});
app.static('/', 'public');
// STATIC-02 app.static takes the same options as staticWith, as a third argument
app.static('/', 'public', {
  maxFileBytes: 1,
  maxTotalBytes: 2,
  dotfiles: true,
  reload: true,
  spaFallbackFor: 'navigations',
});
// @ts-expect-error not a fallback mode
app.static('/', 'public', { spaFallbackFor: 'always' });
// STATIC-03 app.embedded takes the embedded options, and no directory-only ones
app.embedded('/', entries);
app.embedded('/', entries, {
  index: '',
  cacheControl: 'no-cache',
  spaFallback: 'index.html',
  spaFallbackFor: 'anyPath',
  compress: false,
  compressMinBytes: 10,
});
// @ts-expect-error no maxFileBytes on an embedded tree
app.embedded('/', entries, { maxFileBytes: 1 });
// @ts-expect-error no reload on an embedded tree
app.embedded('/', entries, { reload: true });

const shared: EmbeddedOptions = {};
const full: StaticOptions = shared;
void full;
