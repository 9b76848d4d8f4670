// The slow upstream the crash server calls (a bank): POST /charges with an Idempotency-Key makes
// one effect per key, the first time the key arrives, and answers it after `delayMs`; a key that
// arrives again gets the same effect back. It counts at the upstream what never-twice means for
// an outbound call: how many effects each transfer got (one derived key per transfer, so one
// effect), and how often one key arrived while a call with it was still in flight here (two runs
// of one request at once: a claim that did not exclude).
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface UpstreamReport {
  /** Calls taken, and those that replayed an effect made before. */
  readonly arrivals: number;
  readonly replays: number;
  /** Calls whose key was in flight here already (answered 409). */
  readonly concurrent: number;
  /** Calls whose key came before with another transfer (answered 422). */
  readonly keyReused: number;
}

export interface Upstream {
  readonly url: string;
  report(): UpstreamReport;
  /** The effects made for `transfer` (one per derived key it was sent with). */
  effectsOf(transfer: string): readonly number[];
  close(): Promise<void>;
}

interface Effect {
  readonly id: number;
  readonly transfer: string;
  /** Calls with this key being answered now. */
  inFlight: number;
}

/** Starts the upstream on a free loopback port. */
export async function startUpstream(delayMs: number): Promise<Upstream> {
  const byKey = new Map<string, Effect>();
  const byTransfer = new Map<string, number[]>();
  const counts = { arrivals: 0, replays: 0, concurrent: 0, keyReused: 0 };
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (b: Buffer) => (body += b.toString()));
    req.on('end', () => {
      counts.arrivals++;
      const key = String(req.headers['idempotency-key'] ?? '');
      const transfer = String((JSON.parse(body || '{}') as { transfer?: string }).transfer);
      const answer = (status: number, json: object) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(json));
      };
      if (key === '') return answer(400, { error: 'no Idempotency-Key' });
      let effect = byKey.get(key);
      if (effect !== undefined && effect.transfer !== transfer) {
        counts.keyReused++;
        return answer(422, { error: 'key used for another transfer' });
      }
      if (effect !== undefined && effect.inFlight > 0) {
        counts.concurrent++;
        return answer(409, { error: 'a call with this key is in flight' });
      }
      if (effect === undefined) {
        effect = { id: byKey.size + 1, transfer, inFlight: 0 };
        byKey.set(key, effect);
        byTransfer.set(transfer, [...(byTransfer.get(transfer) ?? []), effect.id]);
      } else counts.replays++;
      const made = effect;
      made.inFlight++;
      setTimeout(() => {
        made.inFlight--;
        answer(201, { effect: made.id });
      }, delayMs);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    report: () => ({ ...counts }),
    effectsOf: (transfer) => byTransfer.get(transfer) ?? [],
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
