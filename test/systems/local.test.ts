import { runSystemContract } from './system-contract.js';

runSystemContract('local', { systems: {}, system: 'local', skip: false });
