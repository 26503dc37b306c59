import type { StateRecord, WriteOptions } from './state.js';
import type { WriteOp } from './write-plan.js';

/**
 * The five write methods of the State contract, for stores that implement them all through one
 * `write(op, ...)` — every built-in store does, so that the rules of write-plan.ts (versions,
 * RECORD_EXISTS, idempotency keys) are applied the same way everywhere.
 */
export abstract class WriteMethods {
  /** apply one write atomically; `data` is the patch for update, absent for delete */
  protected abstract write(
    op: WriteOp,
    id: string,
    data: Record<string, unknown> | undefined,
    options?: WriteOptions,
  ): Promise<StateRecord>;

  create(id: string, data: Record<string, unknown>, options?: WriteOptions): Promise<StateRecord> {
    return this.write('create', id, data, options);
  }
  update(id: string, patch: Record<string, unknown>, options?: WriteOptions): Promise<StateRecord> {
    return this.write('update', id, patch, options);
  }
  set(id: string, data: Record<string, unknown>, options?: WriteOptions): Promise<StateRecord> {
    return this.write('set', id, data, options);
  }
  upsert(id: string, data: Record<string, unknown>, options?: WriteOptions): Promise<StateRecord> {
    return this.write('upsert', id, data, options);
  }
  async delete(id: string, options?: WriteOptions): Promise<void> {
    await this.write('delete', id, undefined, options);
  }
}
