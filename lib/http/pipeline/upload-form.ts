import { Bound } from '../core/bound';
import { Failure, HttpError } from '../core/errors';
import { fail } from '../core/fail';
import type { Ctx } from '../request/ctx';
import type { UploadPlan } from '../request/read-upload';
import { UPLOAD_DEFAULTS, uploadLimits, type UploadLimits } from '../request/uploaded-file';
import type { StreamedFile, UploadedFile } from '../request/uploaded-file';
import type { ArgRecord, RouteRecord } from '../route/route-record';
import { settleFile } from '../route/upload-decorators';
import { TOO_MANY, declaredNames, readParams, type Params, type Read } from '../schema';
import { exchangeOf } from '../request/exchange-of';

const MULTIPART = /^multipart\/form-data\s*;/i;
const FORM_CONTENT = /^application\/x-www-form-urlencoded\s*(?:;|$)/i;
const NO_FILES: ReadonlyMap<string, (UploadedFile | StreamedFile)[]> = new Map();

/** The upload plan of a route whose `@Form()` class declares `@FormFile()` fields, or null: its limits settled once, at build. */
export function uploadPlanOf(
  record: RouteRecord,
  appLimits: Partial<UploadLimits> | undefined,
): UploadPlan | null {
  const form = record.args.find(
    (a): a is Extract<ArgRecord, { kind: 'form' }> => a.kind === 'form' && a.files.length > 0,
  );
  if (form === undefined) return null;
  const app = uploadLimits(UPLOAD_DEFAULTS, appLimits, 'App({ uploads })');
  const limits = uploadLimits(app, form.limits ?? undefined, `${record.label}: @Form`);
  const files = new Map(form.files.map((d) => [d.name, settleFile(d, limits, record.label)]));
  return Object.freeze({ files, limits });
}

/**
 * The extractor of a `@Form()` with files: multipart is read into temp files and fields; an
 * urlencoded body into fields alone (its required files then missing). Fields are read by the
 * class's reader, as an urlencoded form's are.
 */
export function uploadFormExtractor(
  arg: Extract<ArgRecord, { kind: 'form' }>,
  plan: UploadPlan,
  read: (input: unknown) => Read,
  maxParams: number,
): (c: Ctx) => unknown {
  const keep = arg.bound ? null : declaredNames(arg.type);
  const build = (
    input: Params,
    files: ReadonlyMap<string, (UploadedFile | StreamedFile)[]>,
  ): unknown => {
    const r = read(input);
    const errors = r.ok ? [] : (r.all ?? [r.message]).map(asForm);
    const missing: string[] = [];
    for (const f of plan.files.values())
      if (f.required && (files.get(f.name)?.length ?? 0) === 0)
        missing.push(`form.${f.name}: a file is required`);
    const value = r.ok ? (r.value as Record<string, unknown>) : null;
    if (value !== null) {
      for (const f of plan.files.values()) {
        const list = files.get(f.name) ?? [];
        value[f.name] = f.many ? list : (list[0] ?? null);
      }
    }
    if (arg.bound) {
      const all = [...errors, ...missing];
      return new Bound(all.length === 0 ? value : null, all, input);
    }
    if (errors.length > 0) throw new Failure(400, errors[0]!);
    if (missing.length > 0) throw new Failure(400, missing[0]!);
    return value;
  };
  return (c) => {
    const type = exchangeOf(c).req.headers['content-type'];
    if (type !== undefined && MULTIPART.test(type))
      return exchangeOf(c)
        .readUpload(plan)
        .then((u) => build(u.fields, u.files));
    if (type === undefined || !FORM_CONTENT.test(type))
      throw fail.badRequest(
        'form: must be sent as multipart/form-data or application/x-www-form-urlencoded',
      );
    return exchangeOf(c).afterBody((bytes) => {
      const input = readParams(bytes.toString('utf8'), keep, maxParams);
      if (input === TOO_MANY)
        throw new HttpError('TooManyParams', `form: more than ${maxParams} parameters`);
      return build(input, NO_FILES);
    });
  };
}

/** The reader names a form's fields as a query's: `query.age` is `form.age`. */
const asForm = (message: string): string => message.replace(/^query/, 'form');
