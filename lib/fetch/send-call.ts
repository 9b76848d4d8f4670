import { callHeaders, type HeaderLine } from './header-line';
import type { Call, Limits } from './call';
import type { Engine } from './engine';
import { fetchHead } from './fetch-head';
import type { Gate } from './gate';
import { FetchResponse } from './response';
import type { Scope } from './scope';
import type { CallWatch } from './telemetry';

/** One `Call` as the client and targets make it; internal. */
export interface CallSpec {
  readonly scope: Scope;
  readonly method: string;
  readonly origin: string;
  /** Path and query, written to the request line as is. */
  readonly path: string;
  readonly body: Buffer | null;
  readonly call: Call;
  readonly limits: Limits;
  /** `application/json` for JSON calls, unless a call line names a content type. */
  readonly contentType?: string | null;
  readonly standing?: {
    readonly headers?: readonly HeaderLine[];
    readonly authorization?: string | null;
    readonly userAgent?: string | null;
    /** Lowercase names of the standing headers: dropped when a redirect leaves the origin. */
    readonly secret?: ReadonlySet<string> | null;
  };
  readonly gate: Gate | null;
  /** The Target's name (its calls' metrics and spans carry it), or null for a plain client call. */
  readonly target?: string | null;
  /** Which retry of the call this is (0 or absent: the first try); its span carries it. */
  readonly resend?: number;
}

/**
 * Sends one call and reads the whole answer: headers assembled and checked, the deadline started,
 * the target's gate then the client's permit taken, redirects followed, the body read under
 * `maxBody`. The guard's `release()` in `finally` gives the permits back on every way out.
 */
export async function sendCall(engine: Engine, spec: CallSpec): Promise<FetchResponse> {
  const guard = engine.guard(spec.scope, spec.limits.timeoutMs);
  const telemetry = engine.telemetry;
  let watch: CallWatch | null = null;
  try {
    const headers = callHeaders({
      call: spec.call.headers,
      standing: spec.standing?.headers,
      authorization: spec.standing?.authorization,
      userAgent: spec.standing?.userAgent,
      contentType: spec.contentType,
      requestId: engine.settings.forwardRequestId ? spec.scope.requestId() : null,
    });
    if (telemetry !== null)
      watch = telemetry.begin(
        {
          scope: spec.scope,
          method: spec.method,
          origin: spec.origin,
          path: spec.path,
          target: spec.target ?? null,
          resend: spec.resend ?? 0,
        },
        headers,
      );
    await engine.admit(guard, spec.gate);
    const { transfer, redirected } = await fetchHead(
      engine,
      guard,
      { origin: spec.origin, path: spec.path, method: spec.method, headers, body: spec.body },
      {
        redirects: 'follow',
        stallMs: spec.limits.stallMs,
        highWaterMark: engine.settings.readBufferSize,
        secret: spec.standing?.secret,
      },
    );
    const bytes = await transfer.collect(spec.limits.maxBody);
    watch?.answered(transfer.status);
    return new FetchResponse({
      status: transfer.status,
      rawHeaders: transfer.rawHeaders,
      headers: transfer.headers,
      bytes,
      redirected,
    });
  } catch (e) {
    watch?.failed(e);
    throw e;
  } finally {
    guard.release();
  }
}
