import { start, startFailure } from './start';

/**
 * `npm start`: the warehouse and the shop (see ./start), JSON log lines in pino's shape on stdout
 * (`npm start | npx pino-pretty` for people); SIGTERM drains both and exits 0. A startup failure
 * (a refused declaration, a port in use, a missing directory) is printed whole on stderr and the
 * exit code is 1, with no stack dump.
 */
start(process.env).then(
  ({ url, stop }) => {
    // In the shape of every other line on stdout (pino's), so log shippers parse it too.
    const line = { level: 30, time: Date.now(), pid: process.pid, msg: `listening on ${url}` };
    console.log(JSON.stringify(line));
    const stopped = () => void stop().then(() => process.exit(0));
    process.once('SIGTERM', stopped);
    process.once('SIGINT', stopped);
  },
  (e: unknown) => {
    console.error(startFailure(e));
    process.exitCode = 1;
  },
);
