/**
 * `fw-http/capabilities`: what a capability of a program's own is made of, the parts fw's own
 * are made of (docs/guide/extending.md). A capability is an object added with
 * `app.use(capability)`: checks of route records at build, arounds of handlers, encoders, and
 * what it adds to the OpenAPI document. A decorator leaves a mark under a `MarkKey` with
 * `markRoute`; the marks of fw's root decorators are here too, for a capability that reads them.
 */
export type { RouteRecord, ArgRecord } from '../../route/route-record';
export { builtInRecord, type BuiltInRoute } from '../../route/route-record';
export { MarkKey, RouteMarks } from '../../route/mark-key';
export { markRoute } from '../../route/decorators';
export type {
  Capability,
  Host,
  Around,
  AroundFactory,
  RecordCheck,
  Services,
  OperationSink,
  HeaderObject,
  MediaTypeObject,
  ParameterObject,
  AnswerCompressor,
  Encoder,
  EncoderExtensions,
  OwnEncoder,
  SecurityDeclaration,
} from '../../route/extensions';
// Answer contracts of a capability's own kind: made with `ownContract` (or carried by a class
// under `OWN_CONTRACT`), answered by the encoder registered under its name.
export {
  ownContract,
  OWN_CONTRACT,
  toContract,
  type OwnContract,
  type OwnContractInit,
} from '../../core/answers';
export { IDEMPOTENT, type IdempotentMark } from '../idempotency/idempotent-mark';
export { RATE, type RateMark } from '../rate-limit';
export { GUARD, type GuardMark, type GuardEntry } from '../guards';
