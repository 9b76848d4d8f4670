// The app option of API versions. It lives below the app (which takes it) and the api-versions
// feature (which acts on it), so that neither names the other.

/**
 * How an app tells versions apart: `new App({ versions: { by: 'uri' } })` serves `@ApiVersion('2')`
 * routes under `/v2/…`; `{ by: 'header' }` serves them at their own path to requests whose
 * `Accept-Version` (or `header`) names the version.
 */
export interface VersionsOptions {
  readonly by: 'uri' | 'header';
  /** With `by: 'header'`: the request header naming the version. Default `Accept-Version`. */
  readonly header?: string;
  /** With `by: 'header'`: the version a request without the header gets. Default the highest declared. */
  readonly default?: string;
}
