/**
 * The public API of the `sagaway` package: what user handler modules and embedding programs use.
 */
export { defineHandler, ack, fail } from './handlers/api.js';
export type {
  ActionContext,
  ActionFn,
  AckResult,
  HandlerDefinition,
  HandlerEnv,
  HandlerFactory,
} from './handlers/api.js';
export {
  ERROR_CODES,
  SagawayError,
  ConfigError,
  type ErrorCode,
  type ErrorInfo,
  type ConfigIssue,
} from './core/errors.js';
export type { Principal, RequestContext, SagaRequest, SagaResult, Outcome, EventStatus } from './core/types.js';
export type { State, StateRecord, ListOptions, ListPage, WriteOptions, QueryResult } from './states/state.js';
export { loadConfig, type LoadedConfig, type LoadOptions } from './config/load.js';
export type { Settings } from './config/settings.js';
export {
  startTestHost,
  loadTestHost,
  testClock,
  TestClock,
  type TestHost,
  type TestHostOptions,
  type RunOptions,
  type Advanced,
} from './testing/index.js';
export { settingsFor, type SettingsOverrides } from './testing/settings.js';
export { createGateway, type Gateway, type GatewayOptions } from './gateway/server.js';
export { Host, type HostOptions } from './runner/host.js';
export { BUILTIN_HANDLERS } from './handlers/index.js';
export { createState } from './states/index.js';
