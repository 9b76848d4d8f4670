/**
 * `fw-http/files`: files as answers and static trees. `Dir.open(path)` binds a directory,
 * `@Returns(FileBody)` answers with a file of it (ranges, ETag, conditional requests), and the
 * option types of `c.sendFile`, `app.static`, `app.embedded` and `app.compress`. This file is the
 * folder's only public door.
 */
export { Dir, type DirOptions } from './dir';
export { FileBody, type FileBodyInit } from './file-body';
export type { SendFileOptions } from './send-file';
export type { CompressOptions } from '../compress';
export type { StaticOptions, EmbeddedOptions, EmbeddedEntry } from '../static/static-tree';
