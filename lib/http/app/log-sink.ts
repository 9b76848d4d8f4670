/**
 * Log lines are gathered and written once per turn of the event loop (or when 64 KiB pile up),
 * never one synchronous write per request.
 */
export class LogSink {
  readonly #write: (text: string) => void;
  #lines: string[] = [];
  #bytes = 0;
  #scheduled = false;

  constructor(write: (text: string) => void = (t) => void process.stdout.write(t)) {
    this.#write = write;
  }

  line(text: string): void {
    this.#lines.push(text);
    this.#bytes += text.length + 1;
    if (this.#bytes >= 64 * 1024) this.flush();
    else if (!this.#scheduled) {
      this.#scheduled = true;
      setImmediate(() => this.flush());
    }
  }

  flush(): void {
    this.#scheduled = false;
    if (this.#lines.length === 0) return;
    const text = this.#lines.join('\n') + '\n';
    this.#lines = [];
    this.#bytes = 0;
    this.#write(text);
  }
}
