import type { FastifyBaseLogger } from 'fastify';
import type { GatewaySettings } from '../config/settings.js';
import type { SagaService } from '../core/messages.js';
import type { ApiMap } from './apis/api-map.js';
import type { Authenticator } from './auth/authenticator.js';
import type { CursorCodec } from './stream/cursor.js';
import type { GatewayMetrics } from './http/helpers/metrics.js';
import type { StreamRegistry } from './stream/limits.js';

/** Everything the routes of one gateway share, built once. */
export interface GatewayContext {
  settings: GatewaySettings;
  service: SagaService;
  apis: ApiMap;
  auth: Authenticator;
  cursors: CursorCodec;
  metrics: GatewayMetrics;
  streams: StreamRegistry;
  log: FastifyBaseLogger;
}
