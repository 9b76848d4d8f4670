import type { Capability, RecordCheck } from '../../route/extensions';
import { busboyMissing } from '../../request/busboy-peer';
import { IDEMPOTENT } from '../idempotency/idempotent-mark';

/**
 * An `@Idempotent` route fingerprints a form before its handler runs, which a file handed to the
 * handler as a stream cannot give: that pairing is refused at build, naming the field.
 */
const streamedIdempotent: RecordCheck = (record, _services, problems) => {
  if (record.marks.get(IDEMPOTENT) === undefined) return;
  for (const a of record.args)
    if (a.kind === 'form')
      for (const f of a.files)
        if (f.options.stream === true)
          problems.push(
            `${record.label}: @Idempotent cannot fingerprint the streamed file ${f.name} before the handler runs: drop stream: true (the file then goes to a temp file)`,
          );
};

/** A route that reads files needs busboy: without it installed, a Refusal naming the command. */
const peerInstalled: RecordCheck = (record, _services, problems) => {
  if (!record.args.some((a) => a.kind === 'form' && a.files.length > 0)) return;
  const missing = busboyMissing();
  if (missing !== null) problems.push(`${record.label}: ${missing}`);
};

/** Uploads: the Refusals of `@FormFile()` declarations on a route. */
export const uploads: Capability = { checks: [streamedIdempotent, peerInstalled] };
