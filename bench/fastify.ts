// Fastify 5 on the two routes of the table, written as a Fastify user would: the body
// checked by its native JSON schema (Ajv), the answers written by its response schemas
// (fast-json-stringify). Its logger is off, as fw's log is in the bench app.
import Fastify, { type FastifyInstance } from 'fastify';
import { SMALL } from './data';

const small = {
  type: 'object',
  properties: {
    id: { type: 'integer' },
    name: { type: 'string' },
    tags: { type: 'array', items: { type: 'string' } },
  },
} as const;

const order = {
  type: 'object',
  required: ['sku', 'qty'],
  properties: {
    sku: { type: 'string', minLength: 1, maxLength: 32 },
    qty: { type: 'integer', minimum: 1, maximum: 100 },
  },
} as const;

/** GET /small and POST /orders, the same answers as the bench app's routes. */
export function fastifyApp(keepAliveMs?: number): FastifyInstance {
  const app = Fastify({ logger: false, ...(keepAliveMs ? { keepAliveTimeout: keepAliveMs } : {}) });
  app.get('/small', { schema: { response: { 200: small } } }, async () => SMALL);
  app.post<{ Body: { sku: string; qty: number } }>(
    '/orders',
    { schema: { body: order, response: { 201: order } } },
    async (req, reply) => {
      reply.code(201);
      return { sku: req.body.sku, qty: req.body.qty };
    },
  );
  return app;
}
