/**
 * `fw-http/uploads`: multipart forms with files. A `@Form()` class's `@FormFile()` fields arrive as
 * an `UploadedFile` (kept in memory or a temporary file) or, with `stream: true`, a `StreamedFile`;
 * `UPLOAD_DEFAULTS` are the limits a form has unless its route says otherwise, and `@BodyLimit`
 * sets one route's body bound. This file is the folder's only public door.
 */
export { FormFile, BodyLimit, type FileOptions } from '../../route/upload-decorators';
export {
  UploadedFile,
  StreamedFile,
  UPLOAD_DEFAULTS,
  type UploadLimits,
} from '../../request/uploaded-file';
