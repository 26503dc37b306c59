// sagaway user handler of the SSE workloads: Page, Since and Idle over bench/sse/feed.mjs.
import { page, since } from './feed.mjs';

/** How long /changes waits between polls: `?wait=` (ms) or 50 ms. */
const waitOf = (input) => (input.wait === undefined ? 50 : Number(input.wait));

export default {
  name: 'feed',
  actions: {
    Page: { 0: (input) => ({ ...page(input.previous, input.start), continue: true }) },
    Since: { 0: (input) => ({ ...since(input.previous), continue: true, wait: waitOf(input) }) },
    Idle: { 0: () => ({ list: [], continue: true, wait: '5m' }) },
  },
};
