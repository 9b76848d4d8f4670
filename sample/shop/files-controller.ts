import { Controller, Get, Param, Returns } from 'fw-http';
import { Dir, FileBody } from 'fw-http/files';

/** Files from sample/files/: `..`, absolute names and NUL are the same 404 as a missing file. */
@Controller('/files')
export class FilesController {
  constructor(readonly dir: Dir) {}

  @Get('/{name}')
  @Returns(FileBody)
  file(@Param('name') name: string): FileBody {
    return new FileBody({
      dir: this.dir,
      name,
      contentType: name.endsWith('.txt') ? 'text/plain; charset=utf-8' : 'application/octet-stream',
      cacheControl: 'public, max-age=60',
    });
  }
}
