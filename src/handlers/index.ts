import type { HandlerFactory } from './api.js';
import { actionHandler } from './action.js';
import { queryHandler } from './query.js';
import { readHandler } from './read.js';
import { restHandler } from './rest/index.js';
import { sagaHandler } from './saga.js';
import { taskHandler } from './task.js';
import { writeHandler } from './write.js';

/** The built-in handlers by the name a runner lists them under (`runners.R.handlers`). */
export const BUILTIN_HANDLERS: Readonly<Record<string, HandlerFactory>> = Object.freeze({
  read: readHandler,
  write: writeHandler,
  query: queryHandler,
  rest: restHandler,
  action: actionHandler,
  task: taskHandler,
  saga: sagaHandler,
});

/** Each factory, for hosts that pick their own set. */
export { actionHandler, queryHandler, readHandler, restHandler, sagaHandler, taskHandler, writeHandler };
