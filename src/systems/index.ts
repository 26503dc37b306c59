import type { CreateCluster } from './system.js';

/**
 * The cluster a configuration describes (system.ts Cluster): NATS when the file has a nats
 * system, else none (the process's runners are reached in process, local.ts). The nats.js client
 * is imported only then, so the embedded default never loads it. The command line hands this to
 * the runner host (runner/host.ts HostOptions.createCluster): the runner never imports a transport.
 */
export const createCluster: CreateCluster = async (settings, log, options = {}) => {
  if (!Object.values(settings.systems).some((s) => s.type === 'nats')) return undefined;
  const { NatsHub } = await import('./nats/hub.js');
  return new NatsHub(settings, log, options.instance, { gatewayOnly: options.gatewayOnly === true });
};

export type { Cluster, ClusterOptions, CreateCluster } from './system.js';
