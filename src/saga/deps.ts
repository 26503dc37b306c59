import type { Cancellable } from '../core/cancel.js';
import type { Logger } from '../core/logger.js';
import type { EventMessage, EventReply } from '../core/messages.js';
import type { EventStatus } from '../core/types.js';
import type { EngineClock } from './retry.js';

/** What the engine needs from the runner that orchestrates the saga. */
export interface EngineDeps {
  /**
   * Send an event where its `stream` says and resolve with the reply. Never rejects, and resolves
   * promptly once `cancel` aborts (the saga ended or the step timed out).
   */
  dispatch(event: EventMessage, cancel: Cancellable): EventReply | Promise<EventReply>;
  log: Logger;
  /** steps one run may take (guards loops) */
  maxSteps: number;
  /** time between retries; default the real clock */
  clock?: EngineClock;
  /** metrics hooks; default none */
  observer?: EngineObserver;
}

/** Metrics hooks of the engine (all optional). Labels are saga and step ids: bounded by the configuration. */
export interface EngineObserver {
  /** one try of an event step ended (`attempt` counts from 1) */
  tried?(saga: string, step: string, status: EventStatus, attempt: number): void;
  /** one compensation (undo event) ended, after its own retries */
  undone?(saga: string, step: string, status: EventStatus): void;
  /** a failed run's compensations ended */
  compensated?(saga: string, compensation: 'COMPLETED' | 'PARTIAL'): void;
}
