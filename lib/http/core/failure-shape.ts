/** Room a custom failure shape has around its message; a shape needing more falls back to the default. */
export const ENVELOPE_ROOM = 256;

/** A class passed to `app.failures(T)`: its static `failure(status, message)` builds the body. */
export interface FailureShape {
  failure(status: number, message: string): object;
}

export const defaultFailureBody = (status: number, message: string): string => `{"error":${JSON.stringify(message)},"status":${status}}`;

/** Compiles the failure body writer of an app: the default `{ error, status }`, or the program's own shape. */
export function failureBodyFor(shape: FailureShape | null): (status: number, message: string) => string {
  if (shape === null) return defaultFailureBody;
  return (status, message) => {
    const body = JSON.stringify(shape.failure(status, message));
    const envelope = Buffer.byteLength(body) - Buffer.byteLength(JSON.stringify(message));
    return envelope > ENVELOPE_ROOM ? defaultFailureBody(status, message) : body;
  };
}
