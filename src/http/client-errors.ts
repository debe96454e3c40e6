import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyBaseLogger, FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config.js';
import { errorHandler, parserErrorOf } from './errors.js';
import { jsonSecurityHeaders } from './security-headers.js';

/**
 * Fastify's frameworkErrors: a request the router refused before any route took it (a path part
 * that does not decode, one past maxParamLength) gets the error handler's answer. Such a reply
 * runs no onSend hook, so it is given here what the hooks give every other answer.
 */
export function frameworkErrorHandler(config: Config) {
  const securityHeaders = jsonSecurityHeaders(config);
  return function onFrameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
    reply.headers({ ...securityHeaders, 'x-request-id': request.id });
    errorHandler(error, request, reply);
  };
}

/**
 * Fastify's clientErrorHandler: answers a request Node's HTTP parser refused (no Fastify request
 * or reply exists, so the answer is written to the socket whole) in the error shape of every other
 * answer (decisions.md), with the security headers; then closes the connection, whose framing can
 * no longer be trusted. As Fastify's default handler: a reset or closed socket gets nothing.
 */
export function clientErrorHandler(config: Config) {
  const securityHeaders = Object.entries(jsonSecurityHeaders(config)).map(([name, value]) => `${name}: ${value}\r\n`).join('');
  return function onClientError(this: { log: FastifyBaseLogger }, error: Error & { code?: string }, socket: Socket): void {
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    // The client's mistake, not the service's: logged as Fastify does, below the default level.
    // Its code and reason only: Node's parser errors carry `rawPacket`, the bytes it was parsing
    // (the request's headers, an Authorization included, and any body in the same chunk: a card
    // number and CVV), which the error serialiser would copy into the line, past every redaction.
    this.log.trace({ code: error.code, reason: (error as { reason?: string }).reason }, 'client error');
    if (socket.writable) {
      const answer = parserErrorOf(error.code);
      const body = JSON.stringify(answer.toJSON());
      socket.write(
        `HTTP/1.1 ${answer.status} ${STATUS_CODES[answer.status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
          `${securityHeaders}Connection: close\r\n\r\n${body}`,
      );
    }
    socket.destroy(error);
  };
}
