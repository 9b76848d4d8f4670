import { App, Controller, Form, Post, Returns, Status } from 'fw-http';
import { FormFile, type UploadedFile } from 'fw-http/uploads';

const MIB = 1024 * 1024;

class Upload {
  @FormFile({ maxBytes: 2048 * MIB }) file!: UploadedFile;
}

@Controller()
class Uploads {
  @Post('/upload')
  @Returns(Status(201, Object))
  take(@Form() u: Upload) {
    return { size: u.file.size, sha256: u.file.sha256 };
  }
}

/** fw's upload route for the bench: one file to a temp file, limits raised to take 1 GiB. */
export const uploadApp = (): App =>
  new App({
    log: () => {},
    requestTimeoutMs: 600_000,
    uploads: { maxTotalBytes: 2048 * MIB },
  }).controllers(Uploads);
