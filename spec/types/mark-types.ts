// Type-level checks of route marks: checked by `tsc --noEmit` in `npm test`, never run.
import {
  IDEMPOTENT,
  RATE,
  type IdempotentMark,
  type MarkKey,
  type RateMark,
  type RouteRecord,
} from 'fw-http/capabilities';
import { UPGRADE, type UpgradeMark } from 'fw-http/ws';

declare const record: RouteRecord;

// A mark read through its key has the key's type.
const idem: IdempotentMark | undefined = record.marks.get(IDEMPOTENT);
const rate: RateMark | undefined = record.marks.get(RATE);
const upgrade: UpgradeMark | undefined = record.marks.get(UPGRADE);
// @ts-expect-error a mark may be missing: it is undefined then
const sure: RateMark = record.marks.get(RATE);
// @ts-expect-error the rate key reads a RateMark, not an IdempotentMark
const wrong: IdempotentMark | undefined = record.marks.get(RATE);
// @ts-expect-error one capability's key is not another's
const swapped: MarkKey<RateMark> = IDEMPOTENT;
// @ts-expect-error the old hand-listed fields are gone
const gone = record.idempotent;

void [idem, rate, upgrade, sure, wrong, swapped, gone];
