// Packages the guide shows with fw that fw itself does not install: their shape, as far as the
// guide's examples use it.
declare module '@valibot/to-json-schema' {
  export function toJsonSchema(schema: unknown): Record<string, unknown>;
}
declare module '@opentelemetry/sdk-node' {
  export class NodeSDK {
    constructor(options: { traceExporter?: unknown; metricReader?: unknown });
    start(): void;
    shutdown(): Promise<void>;
  }
}
