// Preloaded (--import) into a measured process started with --expose-gc: SIGUSR2 runs a full
// garbage collection, so that RSS is read without garbage in it. Only the wait benchmarks use it.
process.on('SIGUSR2', () => globalThis.gc?.());
